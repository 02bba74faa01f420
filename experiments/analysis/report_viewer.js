// The report's text viewer (experiments/analysis/html_page.py writes the data it reads).
// Every string from the data is set with textContent, never as HTML: model-written text
// shows as text and cannot run.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("lab-data").textContent);
  const ALL = "";

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fmt(value, digits) {
    return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
  }

  // ---- filters: one select per facet, its options the values present ----
  const form = document.getElementById("filters");
  const selects = {};
  function values(key) {
    const found = new Set();
    for (const g of data.groups) {
      if (key === data.step_facet) {
        for (const c of g.columns) Object.keys(c.steps).forEach((s) => found.add(s));
      } else if (g.facets[key] !== undefined) {
        [].concat(g.facets[key]).forEach((v) => found.add(v));
      }
    }
    return [...found].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  }
  for (const [key, label] of data.facets) {
    const box = el("label", {}, label + " ");
    const select = el("select", { id: "filter-" + key, name: key });
    select.appendChild(el("option", { value: ALL }, "all"));
    for (const v of values(key)) select.appendChild(el("option", { value: v }, v));
    select.addEventListener("change", (event) => {
      render(event);
      filtersToHash();
    });
    box.appendChild(select);
    form.appendChild(box);
    selects[key] = select;
  }

  // ---- one text with its readings and flags ----
  // Columns a text's readings have: "answer" only where a judge wrote one (a grader).
  function scoreTable(scores) {
    const wrap = el("div", { class: "table-wrap" });
    const table = el("table", { class: "scores" });
    const answers = scores.some((s) => s.answer);
    const head = el("tr");
    for (const h of ["judge", "item", "value", "coverage", "bound"].concat(answers ? ["answer"] : [])) {
      head.appendChild(el("th", {}, h));
    }
    table.appendChild(head);
    for (const s of scores) {
      const tr = el("tr", s.readable ? {} : { class: "unreadable" });
      const digits = { probability: 2, projection: 3 }[s.scale] || 1;
      const shown = s.readable ? fmt(s.value, digits) : "unreadable";
      const bound = s.bound ? "[" + fmt(s.bound[0], digits) + ", " + fmt(s.bound[1], digits) + "]" : "–";
      const cells = [s.judge, s.item, shown, fmt(s.coverage, 3), bound];
      for (const v of answers ? cells.concat([s.answer || ""]) : cells) {
        tr.appendChild(el("td", {}, v));
      }
      table.appendChild(tr);
    }
    wrap.appendChild(table);
    return wrap;
  }

  // The conversation a text belongs to: the first group that shows it in its own (first) column.
  const home = {};
  for (const g of data.groups) {
    for (const id of g.lead) home[id] = home[id] || g;
    for (const ids of Object.values(g.columns[0].steps)) {
      for (const id of ids) home[id] = home[id] || g;
    }
  }

  function openGroup(group) {
    for (const [key] of data.facets) {
      const value = key === data.step_facet ? ALL : [].concat(group.facets[key])[0];
      if (selects[key]) selects[key].value = value === undefined ? ALL : value;
    }
    render(true);
    location.hash = "group-" + group.id;
  }

  function textBox(id, linked) {
    const t = data.texts[id];
    const box = el("div", { class: "text " + (t ? t.kind : "missing"), "data-text": id });
    if (!t) {
      box.appendChild(el("p", { class: "label" }, id + " (not in this report's texts)"));
      return box;
    }
    const label = el("p", { class: "label" }, t.label + " ");
    label.appendChild(el("code", {}, t.id));
    for (const f of t.flags) label.appendChild(el("span", { class: "flag" }, f));
    if (linked && home[id]) {
      const open = el("a", { href: "#viewer", class: "open" }, "its conversation");
      open.addEventListener("click", (event) => {
        event.preventDefault();
        openGroup(home[id]);
      });
      label.appendChild(open);
    }
    box.appendChild(label);
    box.appendChild(el("div", { class: "body" }, t.text));
    if (t.scores.length) {
      // A few readings (an entry's scores) open; a rubric's fifteen stay folded.
      const more = el("details", t.scores.length <= 4 ? { open: "" } : {});
      more.appendChild(el("summary", {}, t.scores.length + " readings"));
      more.appendChild(scoreTable(t.scores));
      box.appendChild(more);
    }
    return box;
  }

  // ---- groups: columns side by side, steps down ----
  function chosen(key) {
    return selects[key] ? selects[key].value : ALL;
  }

  function shows(group) {
    return data.facets.every(([key]) => {
      const want = chosen(key);
      if (want === ALL) return true;
      if (key === data.step_facet) return group.columns.some((c) => want in c.steps);
      return [].concat(group.facets[key]).includes(want);
    });
  }

  function groupBox(group) {
    const box = el("article", { class: "group", id: "group-" + group.id });
    box.appendChild(el("h3", {}, group.title));
    for (const id of group.lead) box.appendChild(textBox(id));
    const grid = el("div", { class: "columns" });
    grid.style.gridTemplateColumns = "repeat(" + group.columns.length + ", minmax(0, 1fr))";
    const steps = new Set();
    group.columns.forEach((c) => Object.keys(c.steps).forEach((s) => steps.add(s)));
    const wanted = chosen(data.step_facet);
    const order = [...steps].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    for (const c of group.columns) grid.appendChild(el("h4", { class: "column-label" }, c.label));
    for (const step of order) {
      if (wanted !== ALL && step !== wanted) continue;
      for (const c of group.columns) {
        const cell = el("div", { class: "step" });
        cell.appendChild(el("p", { class: "step-label" }, data.step_label + " " + step));
        for (const id of c.steps[step] || []) cell.appendChild(textBox(id));
        grid.appendChild(cell);
      }
    }
    box.appendChild(grid);
    return box;
  }

  // A large run has hundreds of conversations: draw them a page at a time, so the page opens
  // fast; the filters narrow what there is to draw.
  const PAGE = 30;
  let limit = PAGE;

  function render(event) {
    if (event) limit = PAGE;
    const holder = document.getElementById("groups");
    holder.replaceChildren();
    const matching = data.groups.filter(shows);
    const drawn = matching.slice(0, limit);
    for (const g of drawn) holder.appendChild(groupBox(g));
    const count = document.getElementById("count");
    count.textContent = matching.length + " of " + data.groups.length + " shown";
    if (drawn.length < matching.length) {
      count.textContent += " (drawn: the first " + drawn.length + ") ";
      const more = el("button", { type: "button", id: "more" }, "draw " + PAGE + " more");
      more.addEventListener("click", () => {
        limit += PAGE;
        render();
      });
      count.appendChild(more);
    }
  }

  // ---- the filters in the address: #filters?diarist=amara&chatbot=warm, a link to share ----
  function filtersToHash() {
    const parts = [];
    for (const [key] of data.facets) {
      const want = chosen(key);
      if (want !== ALL) parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(want));
    }
    history.replaceState(null, "", parts.length ? "#filters?" + parts.join("&") : "#viewer");
  }

  function filtersFromHash() {
    const match = /^#filters\?(.*)$/.exec(location.hash);
    if (!match) return false;
    for (const pair of match[1].split("&")) {
      const [key, value] = pair.split("=").map(decodeURIComponent);
      const select = selects[key];
      if (select && [...select.options].some((o) => o.value === value)) select.value = value;
    }
    return true;
  }

  // ---- a table row's texts: #row-R4 ----
  function showRow() {
    const panel = document.getElementById("row-panel");
    const match = /^#row-(.+)$/.exec(decodeURIComponent(location.hash));
    const row = match ? data.rows[match[1]] : undefined;
    if (!row) {
      panel.hidden = true;
      return;
    }
    panel.replaceChildren();
    panel.appendChild(el("h2", {}, "Row " + match[1] + " (" + row.table + "): " +
      row.ids.length + " texts behind it"));
    const back = el("a", { href: "#findings" }, "close");
    panel.appendChild(back);
    for (const id of row.ids) panel.appendChild(textBox(id, true));
    panel.hidden = false;
    panel.scrollIntoView();
  }

  window.addEventListener("hashchange", showRow);
  const filtered = filtersFromHash();
  render();
  if (filtered) document.getElementById("viewer").scrollIntoView();
  showRow();
})();
