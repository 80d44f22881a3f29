// hyperflat serve: keeps the page live from the server's event stream (/events). The page is
// complete without it; this only refreshes the numbers while workers fill the store.
"use strict";
(function () {
  const body = document.body;
  const dot = document.getElementById("live");
  const kind = body.dataset.live;
  if (!kind || !window.EventSource) return;

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function when(s) {
    if (!s || s.startsWith("0001-")) return "";
    const d = new Date(s);
    const p = (n) => String(n).padStart(2, "0");
    return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " +
      p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
  }
  function set(id, text) {
    const el = document.getElementById(id);
    if (el) el.textContent = text;
  }

  function showRuns(runs) {
    const table = document.getElementById("runs");
    const tbody = table.tBodies[0];
    tbody.replaceChildren();
    for (const r of runs) {
      const tr = document.createElement("tr");
      tr.dataset.id = r.id;
      const a = document.createElement("a");
      a.href = "/runs/" + r.id;
      a.textContent = r.id;
      cell(tr, "").appendChild(a);
      cell(tr, r.experiment);
      cell(tr, r.preset);
      cell(tr, r.options, "opts");
      const st = document.createElement("span");
      st.className = "status " + r.status;
      st.textContent = r.status;
      cell(tr, "").appendChild(st);
      const td = cell(tr, "", "nw");
      const pr = document.createElement("progress");
      pr.max = r.cells; pr.value = r.done;
      td.append(pr, " " + r.done + "/" + r.cells);
      cell(tr, r.failed, "num");
      cell(tr, r.running, "num");
      cell(tr, r.wall);
      cell(tr, r.cell_seconds.toFixed(1), "num");
      cell(tr, when(r.created), "nw");
      tbody.appendChild(tr);
    }
    table.hidden = runs.length === 0;
    const empty = document.getElementById("empty");
    if (empty) empty.hidden = runs.length > 0;
  }

  // showProgress fills the partial results' table: per method the best so far.
  function showProgress(p) {
    const table = document.getElementById("live-table");
    if (!table || !p) return;
    const fmt = (x) => (x === null || x === undefined ? "" : Number(x.toPrecision(4)).toString());
    document.getElementById("live-best").textContent = p.objective ?
      "best " + p.objective + " so far (" + (p.higher ? "higher" : "lower") + " is better)" : "best so far";
    document.getElementById("live-metric").textContent = "median " + (p.metric || "");
    const tbody = table.tBodies[0];
    tbody.replaceChildren();
    for (const row of p.rows) {
      const tr = document.createElement("tr");
      cell(tr, row.group, "text"); cell(tr, row.method, "text");
      cell(tr, row.cells); cell(tr, row.trials); cell(tr, fmt(row.best)); cell(tr, fmt(row.metric_median));
      tbody.appendChild(tr);
    }
    if (!p.rows.length) {
      const tr = document.createElement("tr");
      const td = cell(tr, "no cell finished yet", "muted text");
      td.colSpan = 6;
      tbody.appendChild(tr);
    }
  }

  function showRun(d) {
    const r = d.run;
    if (String(r.has_result) !== body.dataset.hasResult) {
      // The tables and figures are rendered by the server: fetch the page again.
      location.reload();
      return;
    }
    showProgress(d.progress);
    set("live-done", r.done);
    const answer = document.getElementById("answer");
    if (answer && r.status === "unassembled" && document.getElementById("live-done")) {
      answer.textContent = "Every cell is done, but the run's tables were never assembled: hyperflat report --run " + r.id +
        " assembles and stores them (this server never writes to the store). Per method, the best of the finished cells:";
    }
    document.dispatchEvent(new CustomEvent("hyperflat:run", { detail: d }));
    set("done", r.done); set("cells", r.cells); set("failed", r.failed);
    set("running", r.running); set("pending", r.pending); set("retired", r.retired); set("wall", r.wall);
    set("cellseconds", r.cell_seconds.toFixed(1));
    const st = document.getElementById("status");
    st.className = "status " + r.status; st.textContent = r.status;
    const pr = document.getElementById("progress");
    pr.max = r.cells; pr.value = r.done;
    const tbody = document.getElementById("workers").tBodies[0];
    tbody.replaceChildren();
    for (const w of d.workers) {
      const tr = document.createElement("tr");
      cell(tr, w.name);
      cell(tr, w.running, "num"); cell(tr, w.done, "num"); cell(tr, w.failed, "num");
      cell(tr, w.seconds.toFixed(1), "num");
      cell(tr, when(w.last_activity));
      tbody.appendChild(tr);
    }
    const notice = document.getElementById("notice");
    if (String(d.failed_total) !== body.dataset.failed) {
      notice.textContent = d.failed_total + " failed cells now (" + body.dataset.failed + " when this page was loaded): reload for their reasons.";
      notice.hidden = false;
    }
  }

  const url = kind === "run" ? "/events?run=" + encodeURIComponent(body.dataset.run) : "/events";
  const es = new EventSource(url);
  es.onopen = () => dot && dot.classList.add("on");
  es.onerror = () => dot && dot.classList.remove("on");
  es.addEventListener("runs", (e) => showRuns(JSON.parse(e.data)));
  es.addEventListener("run", (e) => showRun(JSON.parse(e.data)));
})();
