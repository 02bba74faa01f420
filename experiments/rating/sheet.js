// A rating sheet: one item at a time, answers kept in this browser (localStorage) and
// downloaded as one JSON file. Texts are set with textContent: a model's text never runs.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sheet-data").textContent);
  var storeKey = "diarylab-rating:" + data.sample_sha256 + ":" + data.rater;
  var answers = {};
  try { answers = JSON.parse(window.localStorage.getItem(storeKey) || "{}") || {}; } catch (e) { answers = {}; }
  var at = 0;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function questionsOf(item) { return data.questions[item.kind]; }
  function itemDone(item) {
    var given = answers[item.id] || {};
    return questionsOf(item).every(function (q) { return given[q.key] !== undefined; });
  }
  function save() {
    try { window.localStorage.setItem(storeKey, JSON.stringify(answers)); } catch (e) { /* private mode: kept in memory only */ }
    progress();
  }
  function progress() {
    var done = data.items.filter(itemDone).length;
    document.getElementById("progress").textContent = done + " of " + data.items.length + " items answered";
    document.getElementById("position").textContent = "item " + (at + 1) + " of " + data.items.length;
  }
  function setAnswer(item, q, value, box) {
    answers[item.id] = answers[item.id] || {};
    answers[item.id][q.key] = value;
    box.classList.add("answered");
    save();
  }
  function numberQuestion(item, q, box, given) {
    var input = el("input");
    input.type = "number"; input.min = "0"; input.max = "100"; input.step = "1";
    input.name = q.key;
    var problem = el("span", "problem");
    if (given !== undefined) input.value = String(given);
    input.addEventListener("change", function () {
      var text = input.value.trim();
      var value = Number(text);
      if (text === "" || !Number.isInteger(value) || value < 0 || value > 100) {
        problem.textContent = "a whole number from 0 to 100, please";
        return;
      }
      problem.textContent = "";
      setAnswer(item, q, value, box);
    });
    box.appendChild(input); box.appendChild(problem);
  }
  function yesNoQuestion(item, q, box, given) {
    ["yes", "no"].forEach(function (word) {
      var label = el("label");
      var input = el("input");
      input.type = "radio"; input.name = q.key; input.value = word;
      input.checked = given === word;
      input.addEventListener("change", function () { setAnswer(item, q, word, box); });
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + (word === "yes" ? "Yes" : "No") + "  "));
      box.appendChild(label);
    });
  }
  function show(index) {
    at = Math.max(0, Math.min(data.items.length - 1, index));
    var item = data.items[at];
    var main = document.getElementById("item");
    main.textContent = "";
    main.dataset.item = item.id;
    if (item.kind === "reply") {
      if (item.earlier.length) {
        var past = el("details", "earlier");
        past.appendChild(el("summary", null, data.words.earlier_heading));
        item.earlier.forEach(function (pair) { past.appendChild(el("div", "text " + pair[0], pair[1])); });
        main.appendChild(past);
      }
      main.appendChild(el("h2", null, data.words.entry_heading));
      main.appendChild(el("div", "text entry", item.entry));
      main.appendChild(el("h2", null, data.words.reply_heading));
      main.appendChild(el("div", "text reply", item.reply));
    } else {
      main.appendChild(el("h2", null, data.words.entry_heading));
      main.appendChild(el("div", "text entry", item.entry));
    }
    var given = answers[item.id] || {};
    questionsOf(item).forEach(function (q) {
      var box = el("div", "question");
      box.dataset.q = q.key;
      if (given[q.key] !== undefined) box.classList.add("answered");
      box.appendChild(el("div", "words", q.wording));
      (q.scale === "number" ? numberQuestion : yesNoQuestion)(item, q, box, given[q.key]);
      main.appendChild(box);
    });
    progress();
    window.scrollTo(0, 0);
  }
  function download() {
    var missing = data.items.filter(function (it) { return !itemDone(it); }).length;
    var file = {
      format: "diarylab-ratings/1",
      sample_sha256: data.sample_sha256,
      form_sha256: data.form_sha256,
      rater: data.rater,
      saved: new Date().toISOString(),
      answers: answers
    };
    var blob = new Blob([JSON.stringify(file, null, 1)], { type: "application/json" });
    var link = el("a");
    link.href = URL.createObjectURL(blob);
    link.download = "ratings-" + data.rater + "-" + data.sample_sha256.slice(0, 8) + ".json";
    document.body.appendChild(link); link.click(); link.remove();
    document.getElementById("status").textContent = missing
      ? missing + " items are not answered yet: the study team cannot import an unfinished file"
      : "saved: send this file to the study team";
  }
  document.getElementById("prev").addEventListener("click", function () { show(at - 1); });
  document.getElementById("next").addEventListener("click", function () { show(at + 1); });
  document.getElementById("unanswered").addEventListener("click", function () {
    var i = data.items.findIndex(function (it) { return !itemDone(it); });
    show(i < 0 ? at : i);
  });
  document.getElementById("download").addEventListener("click", download);
  show(0);
})();
