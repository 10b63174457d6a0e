// The menu buttons of the article's header: "Toggle primary sidebar" (the site's chapters)
// and "Toggle secondary sidebar" (this page's sections). Added to every page by
// tools/booktools/sphinxext/site.py; checked at 390 px by tests/test_browser.py.
//
// pydata-sphinx-theme 0.17 puts a second pair of these buttons in its own navbar, which
// sphinx-book-theme hides, and both themes wire only the first button of each kind
// (document.querySelector), the hidden one: the visible buttons did nothing, so on a phone
// the chapters could not be reached (pydata-sphinx-theme#2451, sphinx-book-theme#988).
// A click on a visible button is handed to the wired one, which opens the sidebar as a
// dialog on a narrow screen and, from 992 px up, shows or hides it beside the page.
// A tap on a link to this page's own section closes the open dialog, which otherwise
// stays over the section it leads to.
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("#pst-primary-sidebar-modal, #pst-secondary-sidebar-modal")
      .forEach(function (dialog) {
        dialog.addEventListener("click", function (event) {
          var link = event.target.closest("a[href]");
          if (link && link.hash && link.pathname === location.pathname && dialog.open)
            setTimeout(function () { dialog.close(); }, 0);
        });
      });
    ["primary", "secondary"].forEach(function (kind) {
      var buttons = document.querySelectorAll("." + kind + "-toggle");
      var wired = buttons[0];
      Array.prototype.slice.call(buttons, 1).forEach(function (button) {
        button.addEventListener("click", function (event) {
          event.preventDefault();
          event.stopPropagation();
          wired.click();
        });
      });
    });
  });
})();
