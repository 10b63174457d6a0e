// Tell require.js where the modules of the ipywidgets HTML manager live. Their CSS loads
// icon fonts relative to each module's URL, which require.js would otherwise resolve
// against the page (404s on every page with widgets). Keep the version in step with
// nb_ipywidgets_js in _config.yml.
(function () {
  var dist = "https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager@1.0.15/dist";
  var paths = {"@jupyter-widgets/html-manager/dist": dist};
  ["base", "base7", "controls", "controls7", "output", "html-manager"].forEach(function (name) {
    paths["@jupyter-widgets/" + name] = dist + "/" + name;
  });
  require.config({paths: paths});
})();
