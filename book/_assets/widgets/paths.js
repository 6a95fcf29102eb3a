// Loaded between require.js and @jupyter-widgets/html-manager's embed-amd.js (book/_config.yml's
// nb_ipywidgets_js): the renderer's modules and the fonts its CSS names are found in this folder,
// whatever the page's depth, and never on a CDN.
(function () {
  var src = document.currentScript.src;
  var folder = src.slice(0, src.lastIndexOf("/"));
  window.require.config({
    paths: {"@jupyter-widgets/html-manager/dist": folder, "@jupyter-widgets": folder},
  });
  window.__jupyter_widgets_assets_path__ = folder + "/";
})();
