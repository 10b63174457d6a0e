// Loaded on pages with widgets, between require.js and the ipywidgets HTML manager
// (nb_ipywidgets_js in _config.yml). Two fixes, both found by tests/test_browser.py.
//
// 1. Tell require.js where the manager's modules live. Their CSS loads icon fonts
//    relative to each module's URL, which require.js would otherwise resolve against the
//    page (404s). Keep the version in step with _config.yml.
(function () {
  var dist = "https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager@1.0.15/dist";
  var paths = {"@jupyter-widgets/html-manager/dist": dist};
  ["base", "base7", "controls", "controls7", "output", "html-manager"].forEach(function (name) {
    paths["@jupyter-widgets/" + name] = dist + "/" + name;
  });
  require.config({paths: paths});
})();

// 2. The manager typesets widget labels with MathJax 2's MathJax.Hub.Queue. This site
//    uses MathJax 3, which has no Hub: on pages with math and widgets every label threw
//    "Cannot read properties of undefined (reading 'Queue')". Once MathJax 3 is ready,
//    give it a Hub.Queue that typesets the element with MathJax 3's own call.
(function () {
  if (typeof window.MathJax !== "object" || window.MathJax.version) return;
  var startup = window.MathJax.startup = window.MathJax.startup || {};
  var ready = startup.ready;
  startup.ready = function () {
    if (ready) { ready(); } else { MathJax.startup.defaultReady(); }
    MathJax.Hub = {Queue: function (job) {
      var element = job[2];
      MathJax.startup.promise.then(function () { return MathJax.typesetPromise([element]); });
    }};
  };
})();
