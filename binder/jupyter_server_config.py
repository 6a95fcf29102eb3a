# Jupyter server settings for a Binder session; binder/postBuild installs this file into the
# environment's etc/jupyter, where every `jupyter` command of the session reads it.
#
# Each notebook kernel and each page of the projector app (voila/render/...) starts its own
# valkey-server, which lives as long as the kernel. A learner who arrives by the app link and
# closes the tab leaves a kernel that nothing shuts down: Voila's close beacon is refused
# without the session cookie that only a JupyterLab page sets. So kernels that no page is
# connected to are shut down after a few idle minutes, which also stops their servers. A
# kernel with an open page is never culled, however long the learner reads.
c.MappingKernelManager.cull_idle_timeout = 300
c.MappingKernelManager.cull_interval = 60
c.MappingKernelManager.cull_connected = False
