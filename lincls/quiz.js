// One quiz of lincls.quiz: judge an answer on "Check" and show the page's feedback for it.
(function (root) {
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var key = JSON.parse(root.querySelector("script.lincls-quiz-key").textContent);

  function parse(s) { // "0.25", "0,25", "1/4", "-2e-3", "−2" (the pages' minus sign)
    s = s.trim().replace(",", ".").replace(/\u2212/g, "-").replace(/\s+/g, "");
    var m = s.match(/^([-+]?[\d.]+(?:e[-+]?\d+)?)\s*\/\s*([-+]?[\d.]+(?:e[-+]?\d+)?)$/i);
    var x = m ? Number(m[1]) / Number(m[2]) : (s === "" ? NaN : Number(s));
    return isFinite(x) ? x : NaN;
  }

  function feedback(q, ids) { // the feedback items of the answer, copied from "Show the answer"
    return ids.map(function (id) {
      var li = q.querySelector('li[data-fb="' + id + '"]');
      return "<p>" + li.innerHTML + "</p>";
    }).join("");
  }

  function judge(q, k) {
    var ids, ok;
    if (k.kind === "number") {
      var x = parse(q.querySelector("input").value);
      if (isNaN(x)) return [null, "<p>Enter a number, e.g. 0.25 or 1/4.</p>"];
      // a relative slack of 1e-9: a value at the edge (a rounding tie) passes on every CPU
      var near = function (v, tol) { return Math.abs(x - v) <= tol * (1 + 1e-9); };
      ok = near(k.answer, k.tol);
      ids = ["wrong"];
      if (ok) ids = ["right"];
      else k.traps.forEach(function (t, j) { if (near(t[0], t[1])) ids = ["trap" + j]; });
      return [ok, feedback(q, ids)];
    }
    var boxes = q.querySelectorAll("input");
    ids = [];
    if (k.kind === "choice") {
      var j = k.correct.findIndex(function (c, i) { return boxes[i].checked; });
      if (j < 0) return [null, "<p>Choose an answer first.</p>"];
      return [k.correct[j], feedback(q, [String(j)])];
    }
    k.correct.forEach(function (c, i) { if (boxes[i].checked !== c) ids.push(String(i)); });
    ok = ids.length === 0;
    if (ok) k.correct.forEach(function (c, i) { ids.push(String(i)); });
    var lead = ok ? "" : "<p>" + ids.length + " of the " + k.correct.length +
      " statements " + (ids.length === 1 ? "is" : "are") + " judged wrongly:</p>";
    return [ok, lead + feedback(q, ids)];
  }

  root.querySelectorAll(".lincls-quiz-q").forEach(function (q) {
    var k = key[Number(q.dataset.index)], out = q.querySelector(".lincls-quiz-feedback");
    function check() {
      var r = judge(q, k);
      out.className = "lincls-quiz-feedback" + (r[0] === null ? "" : r[0] ? " right" : " wrong");
      out.innerHTML = (r[0] === null ? "" : "<p><strong>" + (r[0] ? "Correct." : "Not yet.") +
        "</strong></p>") + r[1];
    }
    q.querySelector(".lincls-quiz-check").addEventListener("click", check);
    q.querySelectorAll("input").forEach(function (input) { // Enter checks, as the button
      input.addEventListener("keydown", function (e) {
        if (e.key === "Enter") { e.preventDefault(); check(); }
      });
    });
  });
})(document.currentScript && document.currentScript.closest(".lincls-quiz"));
