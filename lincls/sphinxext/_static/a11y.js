// Accessibility fixes of the theme's and the widgets' pages, found by axe-core in
// tests/test_browser.py; added to every page by lincls/sphinxext/site.py.
(function () {
  var VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';

  function fix() {
    // Icon fonts are decoration: the buttons that hold them are named by aria-label, and
    // the search button's "Ctrl+K" hint is not part of its name.
    document.querySelectorAll(".theme-switch-button i, .search-button__button i, "
        + ".search-button__kbd-shortcut").forEach(function (e) {
      e.setAttribute("aria-hidden", "true");
    });
    // myst-nb's "Show code cell source" toggles: the name is the visible text, not
    // "Toggle hidden content".
    document.querySelectorAll("details > summary[aria-label]").forEach(function (summary) {
      if (summary.textContent.trim()) summary.removeAttribute("aria-label");
    });
    // The bibliography: a list needs list items (docutils writes the deprecated
    // role doc-biblioentry).
    document.querySelectorAll('[role="list"].citation-list > .citation').forEach(function (c) {
      c.setAttribute("role", "listitem");
    });
    // A widget slider's handle is named by the slider's description.
    document.querySelectorAll('.widget-slider [role="slider"]:not([aria-label])')
      .forEach(function (handle) {
        var label = handle.closest(".widget-slider").querySelector(".widget-label");
        handle.setAttribute("aria-label", (label && label.textContent.trim()) || "Value");
      });
    // A widget's figure takes the alt text of its cell (data-alt, set by site.py).
    document.querySelectorAll(VIEW + "[data-alt]").forEach(function (view) {
      view.parentElement.querySelectorAll("img:not([alt])").forEach(function (img) {
        img.setAttribute("alt", view.getAttribute("data-alt"));
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    fix();
    // widgets render later, from the embedded state
    if (document.querySelector(VIEW)) {
      new MutationObserver(fix).observe(document.body, {childList: true, subtree: true});
    }
  });
})();
