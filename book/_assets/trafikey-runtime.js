// The page's Python in the reader's browser (book/_ext/trafikey_book.py puts the button on
// notebook pages; tools/book.py stages _static/runtime/). Nothing loads until the reader
// presses "Run in this page": then thebe turns each code cell into an editor with a run
// button, its stored output kept until it runs, and thebe-lite starts a JupyterLite server
// whose Pyodide kernel (a worker) imports everything from this site. The lock it reads,
// pyodide/pyodide-lock.json, names the wheels beside it: the course's library, ipywidgets,
// IPython. Widgets render through thebe's widget manager; their callbacks run in Pyodide.
(function () {
  var src = document.currentScript.src;
  var runtime = src.slice(0, src.lastIndexOf("/")) + "/runtime/";
  var requireJs = src.slice(0, src.lastIndexOf("/")) + "/widgets/require.js";

  function load(url) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = url;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("could not load " + url)); };
      document.head.appendChild(script);
    });
  }

  function say(box, text) {
    box.querySelector(".trafikey-runtime-status").textContent = text;
  }

  // Each code cell with its own output area (a stored one, or a new one after its input).
  function cells() {
    return Array.from(document.querySelectorAll("div.cell")).map(function (cell, index) {
      var source = cell.querySelector(".cell_input pre");
      if (!source) return null;
      var output = cell.querySelector(".cell_output");
      if (!output) {
        output = document.createElement("div");
        output.className = "cell_output";
        cell.appendChild(output);
      }
      return {id: "trafikey-cell-" + index, placeholders: {source: source, output: output}};
    }).filter(Boolean);
  }

  async function activate(box) {
    var started = performance.now();
    box.querySelector("button").disabled = true;
    say(box, "Loading Python (Pyodide) from this site…");
    window.trafikeyRuntime.requireJs = requireJs;
    // JupyterLite's service worker only mirrors the kernel's files into JupyterLite's
    // contents, which this page has none of; registered, it would ping a fixed address at the
    // host's root (/api/service-worker-heartbeat) that no static site serves. Without one,
    // JupyterLite says so in a warning and the kernel runs the same.
    Object.defineProperty(navigator, "serviceWorker", {value: undefined, configurable: true});
    if (!window.requirejs) await load(requireJs);
    await load(runtime + "thebe-lite/thebe-lite.min.js");
    await load(runtime + "thebe/index.js");
    var core = window.thebeCore.module;
    var options = {useJupyterLite: true, kernelOptions: {kernelName: "python"},
                   // no MathJax: thebe would fetch it from a CDN
                   mathjaxUrl: ""};
    var thebeConfig = core.makeConfiguration(options, window.thebe.events);
    var rendermime = core.makeRenderMimeRegistry(thebeConfig.mathjax);
    var items = cells();
    var notebook = core.setupNotebookFromBlocks(items.map(function (item) {
      return {id: item.id, source: item.placeholders.source.textContent.trim()};
    }), thebeConfig, rendermime);
    window.thebe.renderAllCells({mountRunButton: true, codeMirrorConfig: {}}, notebook, items);
    var server = new core.ThebeServer(thebeConfig);
    await server.connectToJupyterLiteServer({litePluginSettings: {
      "@jupyterlite/pyodide-kernel-extension:kernel": {
        pyodideUrl: runtime + "pyodide/pyodide.js",
        pipliteUrls: [runtime + "thebe-lite/pypi/all.json"],
        pipliteWheelUrl: runtime + "thebe-lite/pypi/piplite-0.4.7-py3-none-any.whl",
        disablePyPIFallback: true,
      },
    }});
    await server.ready;
    var session = await server.startNewSession(rendermime);
    notebook.attachSession(session);
    say(box, "Starting the Python kernel…");
    if (session.kernel) await session.kernel.info;
    window.trafikeyRuntime.notebook = notebook;
    // The notes beside widgets and checkers now say what runs here (trafikey_book.py).
    document.querySelectorAll(".trafikey-live-note").forEach(function (note) {
      note.classList.add("trafikey-runs-here");
    });
    window.trafikeyRuntime.ready = performance.now() - started;
    // Every widget's cell uses the setup cell's `course`, and a reader may run any cell first:
    // the page runs its setup cell itself. Sent now, it runs before anything the reader runs,
    // since the kernel takes requests in turn. A page with no setup cell has nothing to run.
    var setup = notebook.cells.find(function (cell) {
      return cell.source.indexOf("trafikey_lab.course.setup(") !== -1;
    });
    var ran = "";
    if (setup) {
      say(box, "Running the page's setup cell…");
      var execute = setup.execute.bind(setup);
      var running = execute();
      // A cell runs one execution at a time (thebe cancels the one under way, and prints
      // "Failed to execute"): the reader's run of this cell (its button, Shift-Enter) waits.
      setup.execute = function (source) {
        return running.then(function () { return execute(source); });
      };
      var result = await running;
      ran = result && !result.error ? "The setup cell has run. "
                                    : "The setup cell failed: its output says why. ";
    }
    say(box, "Python runs in this page: press “run” under a cell. " + ran +
             "The model runs here; what needs the live server (Run live, a checker's live " +
             "part) says so and needs a running notebook: the launch links.");
  }

  window.trafikeyRuntime = {activate: activate};
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".trafikey-runtime").forEach(function (box) {
      box.querySelector("button").addEventListener("click", function () {
        activate(box).catch(function (error) {
          say(box, "Python could not start in this page: " + error);
          throw error;
        });
      });
    });
  });
})();
