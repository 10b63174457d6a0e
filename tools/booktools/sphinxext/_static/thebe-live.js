// Live code: the launch menu's "Live Code" (the theme's initThebeSBT) calls initThebe,
// which turns the page's code cells into editable cells that run on a Jupyter kernel, by
// Thebe 0.9. tools/booktools/sphinxext/thebe.py writes the page's configuration
// (<script type="text/x-thebe-config" data-thebe-js="...">, with the exact Thebe build to
// load) and the hidden cells (the ones the page does not show); see there.
(function () {
  "use strict";
  var started = null;

  function pageConfig() {
    return document.querySelector("script[type='text/x-thebe-config'][data-thebe-js]");
  }

  // The theme puts an empty <button class="thebe-launch-button"> under the title; it
  // becomes a status line (a button without a name or an action helps no one).
  function statusLine() {
    var old = document.querySelector(".thebe-launch-button");
    if (old && old.tagName !== "BUTTON") return old;
    var line = document.createElement("p");
    line.className = "thebe-launch-button lincls-live-status";
    line.setAttribute("role", "status");
    if (old) { old.replaceWith(line); } else {
      var article = document.querySelector("main article") || document.body;
      article.prepend(line);
    }
    return line;
  }

  function say(state, text) {
    var line = statusLine();
    line.dataset.state = state;
    line.textContent = "Live code: " + text;
  }

  function load(src) {
    return new Promise(function (resolve, reject) {
      var css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = src.replace(/index\.js$/, "thebe.css");
      document.head.appendChild(css);
      var script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(script);
    });
  }

  // Every code cell: its source is Thebe's editor, and it has an output area of its own
  // right after it (Thebe 0.9 pairs the n-th source with the n-th output on the page, so a
  // cell without output would otherwise take the next cell's).
  function markCells() {
    document.querySelectorAll("div.cell").forEach(function (cell) {
      var source = cell.querySelector(".cell_input pre, pre.lincls-live-source");
      if (!source) return;                      // an output without its code (remove-input)
      source.setAttribute("data-executable", "true");
      source.setAttribute("data-language", "python");
      var output = cell.querySelector(".cell_output");
      if (!output) {
        output = document.createElement("div");
        output.className = "cell_output docutils container";
        cell.appendChild(output);
      }
      output.setAttribute("data-output", "");
    });
  }

  // Thebe's widget manager fetches require.js from a URL fixed in thebe-core
  // (requireJsLoader.ts); the page answers with the require.js the book pins for its
  // widgets (data-requirejs; nb_ipywidgets_js in _config.yml).
  var THEBE_REQUIREJS = "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js";

  function pinRequireJs(url) {
    if (!url) return;
    var fetch = window.fetch;
    window.fetch = function (resource, init) {
      return fetch.call(this, resource === THEBE_REQUIREJS ? url : resource, init);
    };
  }

  // What Thebe's cells lack for a screen reader (axe-core, tests/test_thebe.py): a name
  // for each editor, and alt text for the figures a live run draws (the cell's figure on
  // the page had one: a new figure of the same cell takes it).
  function labelEditors() {
    document.querySelectorAll(".thebe-cell .CodeMirror textarea").forEach(function (box, i) {
      box.setAttribute("aria-label", "Code of live cell " + (i + 1) + " (editable)");
    });
  }

  function altTexts() {
    document.querySelectorAll("div.cell").forEach(function (cell) {
      var output = cell.querySelector("[data-output]");
      if (!output) return;
      var old = output.querySelector("img[alt]");
      var alt = (old && old.getAttribute("alt")) ||
        "Figure drawn by a live run of the code above, on the kernel Live Code started";
      new MutationObserver(function () {
        output.querySelectorAll("img:not([alt])").forEach(function (img) {
          img.setAttribute("alt", alt);
        });
      }).observe(output, {childList: true, subtree: true});
    });
  }

  async function runSetup(notebook) {
    var boxes = document.querySelectorAll(".lincls-live-setup .thebe-cell[data-thebe-id]");
    for (var i = 0; i < boxes.length; i++) {
      var cell = notebook.getCellById(boxes[i].dataset.thebeId);
      var result = cell && await cell.execute();
      if (!result || result.error) throw new Error("the chapter's set-up failed");
    }
  }

  async function start() {
    var config = pageConfig();
    if (!config) return;
    var wanted = JSON.parse(config.textContent);
    say("loading", "loading Thebe…");
    pinRequireJs(config.dataset.requirejs);
    await load(config.dataset.thebeJs);
    // until the kernel is ready, Thebe's news is the reader's (later ones: a cell's errors,
    // which its output shows)
    var ready = false;
    window.thebe.on("status", function (event, data) {
      if (!ready && (data.subject === "server" || data.subject === "session")) {
        say("starting", data.message);
      }
    });
    window.thebe.on("error", function (event, data) {
      if (!ready) say("error", data.message);
    });
    markCells();
    altTexts();
    // every <script type="text/x-thebe-config"> on the page, merged in order (a local
    // server's settings, as in tests/test_thebe.py, come after the page's and win)
    var merged = window.thebe.getPageConfig();
    var where = merged.useBinder === false ? "the Jupyter server" : merged.binderOptions.binderUrl;
    say("starting", "starting a kernel on " + where + " (Binder: up to a few minutes)…");
    var live = await window.thebe.bootstrap({useBinder: merged.useBinder !== false,
                                             requestKernel: wanted.requestKernel});
    labelEditors();
    if (!live.session) throw new Error("no kernel started");
    say("setup", "running the chapter's set-up…");
    await runSetup(live.notebook);
    ready = true;
    say("ready", "ready. Edit a cell, then run it (Shift+Enter or its run button).");
  }

  window.initThebe = function () {
    if (!started) {
      started = start().catch(function (error) {
        say("error", String(error.message || error) + " (reload the page to try again)");
      });
    }
    return started;
  };
})();
