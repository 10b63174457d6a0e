// Accessibility fixes of the theme's and the widgets' pages, found by axe-core in
// tests/test_browser.py; added to every page by tools/booktools/sphinxext/site.py.
(function () {
  var VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';

  function fix() {
    // The theme's icon buttons: the search field is named by all its visible text
    // ("Search Ctrl+K"); the colour-mode switch by its label, not by the <title> that
    // Font Awesome puts in the icon of the current mode ("Light", "Dark"...).
    document.querySelectorAll(".search-button-field").forEach(function (button) {
      button.setAttribute("aria-label", button.textContent.replace(/\s+/g, " ").trim());
    });
    document.querySelectorAll(".theme-switch-button svg").forEach(function (icon) {
      icon.querySelectorAll("title").forEach(function (title) { title.remove(); });
      icon.removeAttribute("aria-labelledby");
      icon.removeAttribute("role");
      icon.setAttribute("aria-hidden", "true");
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

  // A code block or output that scrolls sideways can be scrolled with the keyboard: the
  // theme gives it a tab stop on load and resize, this also when a dropdown or hidden
  // code cell opens and shows it.
  function tabStops() {
    document.querySelectorAll("pre, .cell_output > .output").forEach(function (e) {
      if (e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight) e.tabIndex = 0;
    });
  }
  document.addEventListener("toggle", tabStops, true);
  document.addEventListener("click", function () { setTimeout(tabStops, 50); }, true);
  document.addEventListener("keyup", function () { setTimeout(tabStops, 50); }, true);

  document.addEventListener("DOMContentLoaded", function () {
    fix();
    // Font Awesome swaps its icons in, and widgets render from the embedded state, later
    new MutationObserver(fix).observe(document.body, {childList: true, subtree: true});
  });
})();
