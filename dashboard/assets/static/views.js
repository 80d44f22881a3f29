// hyperflat serve: the interactive views of a run (and of the comparison page), drawn with the
// embedded Apache ECharts from the JSON the server computes (/api/runs/ID/VIEW). The server
// bounds every view and says when it kept only every k-th point; each chart repeats it.
"use strict";
(function () {
  if (!window.echarts) return;
  const charts = {};
  // The browser test reads the charts' data through this; nothing else uses it.
  window.hyperflatCharts = charts;

  const fmt = (x) => (x === null || x === undefined ? "" :
    typeof x === "number" ? (Number.isInteger(x) ? String(x) : Number(x.toPrecision(5)).toString()) : String(x));

  function api(run, view, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
    return fetch("/api/runs/" + run + "/" + view + "?" + q).then((r) =>
      r.ok ? r.json() : r.text().then((t) => { throw new Error(t); }));
  }
  function chartOn(el, name) {
    let c = echarts.getInstanceByDom(el);
    if (!c) {
      c = echarts.init(el, null, { renderer: "canvas" });
      new ResizeObserver(() => c.resize()).observe(el);
    }
    charts[name] = c;
    return c;
  }
  function sampledNote(s, what) {
    return s ? " Server-downsampled: every " + s.stride + "th of " + s.total + " " + what + " shown (" + s.shown + ")." : "";
  }
  function setNote(el, text) { if (el) el.textContent = text; }
  // A view whose objective is each method's own criterion says so after its note.
  const caveat = (v) => (v.caveat ? " " + v.caveat : "");
  const dir = (higher) => (higher ? "higher is better" : "lower is better");
  // A positive axis spanning more than two decades is drawn on a log scale.
  function axisType(values) {
    const v = values.filter((x) => typeof x === "number");
    if (!v.length) return "value";
    const lo = Math.min(...v), hi = Math.max(...v);
    return lo > 0 && hi / lo > 100 ? "log" : "value";
  }
  const zoom = [{ type: "inside" }, { type: "slider", height: 16, bottom: 4 }];

  function drawHistory(el, h, noteEl) {
    const series = [];
    // One evaluation per method (a fit, not a search: freedman's runs) has no history; its
    // values are drawn as points, which a line of one point would not show.
    const single = h.methods.length > 0 && h.methods.every((m) => m.step.length <= 1);
    const palette = ["#5470c6", "#91cc75", "#3a3f4b", "#fc8452", "#17a2c8", "#fac858", "#9a60b4", "#ea7ccc", "#ee6666", "#73c0de"];
    for (const [mi, m] of h.methods.entries()) {
      const color = palette[mi % palette.length];
      const band = m.q75.map((x, i) => (x === null || m.q25[i] === null ? null : x - m.q25[i]));
      series.push({ name: m.method, type: single ? "scatter" : "line", data: m.step.map((s, i) => [s, m.median[i]]),
        showSymbol: single, symbolSize: 10, z: 3, color });
      if (m.repeats > 1 && !single) {
        series.push({ name: m.method, type: "line", stack: "band-" + m.method, data: m.step.map((s, i) => [s, m.q25[i]]),
          lineStyle: { opacity: 0 }, showSymbol: false, tooltip: { show: false }, silent: true, color });
        series.push({ name: m.method, type: "line", stack: "band-" + m.method, data: m.step.map((s, i) => [s, band[i]]),
          lineStyle: { opacity: 0 }, areaStyle: { opacity: 0.15 }, showSymbol: false, tooltip: { show: false }, silent: true, color });
      }
    }
    const c = chartOn(el, el.dataset.name || "history");
    c.setOption({
      animation: false,
      tooltip: { trigger: "axis", valueFormatter: fmt },
      legend: { type: "scroll", top: 0 },
      grid: { left: 70, right: 20, top: 30, bottom: 60 },
      xAxis: { type: "value", name: h.x, nameLocation: "middle", nameGap: 22, minInterval: 1 },
      yAxis: { type: "value", name: "best " + h.objective + " so far", nameLocation: "middle", nameGap: 50, scale: true },
      dataZoom: zoom,
      series,
    }, true);
    const n = h.methods.reduce((a, m) => Math.max(a, m.repeats), 0);
    el.dataset.repeats = h.methods.reduce((a, m) => a + m.repeats, 0);
    if (single) {
      setNote(noteEl, "One evaluation per method, so no search history: each point is a method's " + h.objective + " (" +
        dir(h.higher) + "), the median over " + n + " repeats." + caveat(h));
      return;
    }
    setNote(noteEl, "Median of the best " + h.objective + " so far (" + dir(h.higher) + ") over " + n +
      " repeats per method, band from the 25th to the 75th percentile; full-fidelity evaluations only." +
      h.methods.map((m) => sampledNote(m.sampled, "steps")).join("") + caveat(h));
  }

  function drawImportance(el, v, noteEl) {
    const ps = v.params.slice().reverse();
    chartOn(el, el.dataset.name || "importance").setOption({
      animation: false,
      tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, valueFormatter: fmt },
      grid: { left: 150, right: 30, top: 10, bottom: 30 },
      xAxis: { type: "value", name: "η²" },
      yAxis: { type: "category", data: ps.map((p) => p.name) },
      series: [{ type: "bar", data: ps.map((p) => p.importance), itemStyle: { color: "#1f77b4" } }],
    }, true);
    setNote(noteEl, "Estimator: " + v.estimator + "; objective " + v.objective + ", " + v.trials + " trials." + caveat(v));
  }

  function drawParallel(el, v, noteEl) {
    const dims = v.params.map((p, i) => {
      const col = v.rows.map((r) => r[i]);
      return p.categories ? { dim: i, name: p.name, type: "category", data: p.categories }
        : { dim: i, name: p.name, type: axisType(col), scale: true };
    });
    const k = v.params.length;
    dims.push({ dim: k, name: v.objective, type: "value", scale: true, nameTextStyle: { fontWeight: "bold" } });
    const data = v.rows.map((r) => r.slice(0, k + 1).map((x, i) => (i < k && v.params[i].categories && x !== null ? v.params[i].categories[x] : x)));
    const ys = v.rows.map((r) => r[k]).filter((x) => x !== null);
    chartOn(el, "parallel").setOption({
      animation: false,
      parallelAxis: dims,
      parallel: { left: 60, right: 110, top: 40, bottom: 30 },
      visualMap: { type: "continuous", dimension: k, min: Math.min(...ys), max: Math.max(...ys), calculable: true,
        inRange: { color: v.higher ? ["#d73027", "#fee08b", "#1a9850"] : ["#1a9850", "#fee08b", "#d73027"] },
        right: 0, top: 40, text: [v.objective, ""] },
      series: [{ type: "parallel", data, lineStyle: { width: 1, opacity: 0.35 }, progressive: 500, smooth: false }],
    }, true);
    setNote(noteEl, v.rows.length + " trials, coloured by " + v.objective + " (" + dir(v.higher) + "); drag on an axis to brush." +
      sampledNote(v.sampled, "trials") + caveat(v));
  }

  // chartDiv is box's chart element whose data-KIND is key, made when missing, and marked kept;
  // pruneCharts removes (and disposes) the charts of box not kept, those of a previous draw.
  function chartDiv(box, keep, kind, key) {
    let div = box.querySelector("[data-" + kind + '="' + CSS.escape(key) + '"]');
    if (!div) {
      div = document.createElement("div");
      div.className = "chart";
      div.dataset[kind] = key;
      box.appendChild(div);
    }
    keep.add(div);
    return div;
  }
  function pruneCharts(box, keep) {
    for (const div of [...box.children]) if (!keep.has(div)) { echarts.getInstanceByDom(div)?.dispose(); div.remove(); }
  }

  function drawSlices(box, v, noteEl) {
    const k = v.params.length;
    const keep = new Set();
    v.params.forEach((p, i) => {
      const div = chartDiv(box, keep, "param", p.name);
      const col = v.rows.map((r) => r[i]);
      const series = v.methods.map((m, mi) => ({
        name: m, type: "scatter", symbolSize: 4, large: true, largeThreshold: 1500,
        data: v.rows.filter((r) => r[k + 1] === mi && r[i] !== null && r[k] !== null).map((r) => [r[i], r[k]]),
      }));
      chartOn(div, "slice:" + p.name).setOption({
        animation: false,
        tooltip: { trigger: "item", formatter: (x) => x.seriesName + "<br>" + p.name + " = " + (p.categories ? p.categories[x.value[0]] : fmt(x.value[0])) + "<br>" + v.objective + " = " + fmt(x.value[1]) },
        grid: { left: 55, right: 15, top: 30, bottom: 40 },
        legend: i === 0 ? { type: "scroll", top: 0, right: 0, left: 110 } : { show: false },
        xAxis: Object.assign(p.categories ? { type: "category", data: p.categories } : { type: axisType(col), scale: true },
          { name: p.name, nameLocation: "middle", nameGap: 22, nameTextStyle: { fontWeight: "bold" } }),
        yAxis: { type: "value", scale: true, name: v.objective },
        series,
      }, true);
    });
    pruneCharts(box, keep);
    setNote(noteEl, "Each trial a point: " + v.objective + " (" + dir(v.higher) + ") against one hyperparameter, one colour per method." +
      sampledNote(v.sampled, "trials") + caveat(v));
  }

  // drawSignals draws each white-box signal of the record (run ahsc --whitebox) against the
  // test metric, every recorded trial a point, one colour per method, Spearman's ρ in the title.
  function drawSignals(box, v, noteEl) {
    const keep = new Set();
    v.signals.forEach((sig, i) => {
      const div = chartDiv(box, keep, "signal", sig.field);
      const xs = sig.points.map((p) => p[0]);
      chartOn(div, "signal:" + sig.field).setOption({
        animation: false,
        title: { text: sig.label + ": ρ = " + fmt(sig.rho) + " over " + sig.n, textStyle: { fontSize: 12 }, left: 0, top: 0 },
        tooltip: { trigger: "item", formatter: (x) => x.seriesName + "<br>" + sig.field + " = " + fmt(x.value[0]) + "<br>" + v.target + " = " + fmt(x.value[1]) },
        grid: { left: 55, right: 15, top: 40, bottom: 40 },
        legend: i === 0 ? { type: "scroll", top: 18, right: 0 } : { show: false },
        xAxis: { type: axisType(xs), scale: true, name: sig.field, nameLocation: "middle", nameGap: 22 },
        yAxis: { type: "value", scale: true, name: v.target },
        series: v.methods.map((m, mi) => ({ name: m, type: "scatter", symbolSize: 4, large: true, largeThreshold: 1500,
          data: sig.points.filter((p) => p[2] === mi).map((p) => [p[0], p[1]]) })),
      }, true);
    });
    pruneCharts(box, keep);
    setNote(noteEl, "Each fully trained trial a point: its white-box record (μ, Hessian trace, top eigenvalue, Eq. 7 regularizer) " +
      "against its " + v.target + ", one colour per method (" + v.methods.join(", ") + "); Spearman's ρ over the points." +
      v.signals.map((s) => sampledNote(s.sampled, "points")).join(""));
  }

  function drawCurves(el, v, noteEl) {
    chartOn(el, "curves").setOption({
      animation: false,
      tooltip: { trigger: "axis", valueFormatter: fmt },
      grid: { left: 70, right: 20, top: 20, bottom: 60 },
      xAxis: { type: "value", name: "step", nameLocation: "middle", nameGap: 22 },
      yAxis: { type: "value", scale: true, name: v.field, nameLocation: "middle", nameGap: 50 },
      dataZoom: zoom,
      series: v.curves.map((c) => ({ name: c.name, type: "line", showSymbol: false, lineStyle: { width: 1 },
        data: c.step.map((s, i) => [s, c.y[i]]) })),
    }, true);
    setNote(noteEl, v.curves.length + " curves of " + v.field + " per step, one per cell." + sampledNote(v.sampled, "curves"));
  }

  function drawScreenings(el, v, noteEl) {
    const series = [];
    let ymin = Infinity, ymax = -Infinity;
    for (const m of v.methods) for (const p of m.points) if (p[2] !== null) { ymin = Math.min(ymin, p[2]); ymax = Math.max(ymax, p[2]); }
    // The rug lies just under the lowest trained point.
    ymin = isFinite(ymin) ? ymin - 0.04 * Math.max(ymax - ymin, 1e-9) : 0;
    for (const m of v.methods) {
      series.push({ name: m.method + ": kept and trained (N2)", type: "scatter", symbolSize: 7,
        data: m.points.filter((p) => p[3] === 1 && p[0] !== null && p[2] !== null).map((p) => [p[0], p[2], p[1]]) });
      // The others were never trained: they have a score and no final metric, drawn as a rug.
      series.push({ name: m.method + ": screened only (no final metric)", type: "scatter", symbol: "rect", symbolSize: [2, 8],
        itemStyle: { color: "#9aa3b5", opacity: 0.6 }, large: true,
        data: m.points.filter((p) => p[3] === 0 && p[0] !== null).map((p) => [p[0], ymin]) });
    }
    chartOn(el, "screenings").setOption({
      animation: false,
      legend: { type: "scroll", top: 0 },
      tooltip: { trigger: "item", formatter: (x) => x.seriesName + "<br>score = " + fmt(x.value[0]) + (x.value.length > 2 ? "<br>test metric = " + fmt(x.value[1]) + "<br>val objective = " + fmt(x.value[2]) : "") },
      grid: { left: 70, right: 20, top: 40, bottom: 60 },
      xAxis: { type: "value", scale: true, name: v.methods.map((m) => m.score_name).join(" / "), nameLocation: "middle", nameGap: 25 },
      yAxis: { type: "value", scale: true, name: "final test metric", nameLocation: "middle", nameGap: 45 },
      dataZoom: zoom,
      series,
    }, true);
    setNote(noteEl, v.methods.map((m) => m.method + ": " + m.screened + " screened, " + m.trained + " trained; Spearman ρ(score, test metric) = " +
      fmt(m.rho_test) + ", ρ(score, validation objective) = " + fmt(m.rho_val) + " over " + m.rho_n + " trained (the validation objective is what the search minimised)" + sampledNote(m.sampled, "screenings")).join("; ") + ".");
  }

  function drawGap(el, v, noteEl) {
    chartOn(el, "gap").setOption({
      animation: false,
      legend: { type: "scroll", top: 0 },
      tooltip: { trigger: "item", formatter: (x) => x.seriesName + ", hyper-step " + x.value[2] + "<br>regularizer = " + fmt(x.value[0]) + "<br>gap = " + fmt(x.value[1]) },
      grid: { left: 70, right: 20, top: 40, bottom: 60 },
      xAxis: { type: "log", name: "regularizer √Σ‖a_t‖² (log scale)", nameLocation: "middle", nameGap: 25 },
      yAxis: { type: "value", scale: true, name: "validation − test accuracy", nameLocation: "middle", nameGap: 45 },
      dataZoom: zoom,
      series: v.series.map((s) => ({ name: s.name, type: "scatter", symbolSize: 4, large: true, data: s.points })),
    }, true);
    setNote(noteEl, v.n + " hyper-steps; Spearman ρ(regularizer, gap) = " + fmt(v.rho) + "." + sampledNote(v.sampled, "points"));
  }

  // The run page.
  const root = document.getElementById("views");
  if (root) runPage(root);
  // The comparison page.
  for (const side of document.querySelectorAll(".compare-views")) {
    const run = side.dataset.run;
    const h = side.querySelector('[data-view="history"]'), im = side.querySelector('[data-view="importance"]');
    h.dataset.name = "history:" + run;
    im.dataset.name = "importance:" + run;
    api(run, "history").then((v) => drawHistory(h, v, h.previousElementSibling)).catch((e) => setNote(h.previousElementSibling, e.message));
    api(run, "importance").then((v) => drawImportance(im, v, im.previousElementSibling)).catch((e) => setNote(im.previousElementSibling, e.message));
  }

  function runPage(root) {
    const run = root.dataset.run;
    const $ = (id) => document.getElementById(id);
    const st = { group: "", objective: "", higher: "", field: "", sort: "", desc: "", filter: "", offset: 0 };
    let meta = null;
    const q = () => ({ group: st.group, objective: st.objective, higher: st.higher });

    function options(sel, values, current) {
      sel.replaceChildren(...values.map((v) => { const o = document.createElement("option"); o.value = o.textContent = v; return o; }));
      if (values.includes(current)) sel.value = current;
    }
    function fail(noteId) { return (e) => setNote($(noteId), "could not draw: " + e.message); }

    function refresh() {
      return api(run, "views", q()).then((m) => {
        meta = m;
        $("view-controls").hidden = false;
        $("views-empty").hidden = m.cells > 0;
        if (!st.group) st.group = m.groups[0] || "";
        if (!st.objective) { st.objective = m.objective; st.higher = m.higher ? "1" : "0"; }
        options($("ctl-group"), m.groups, st.group);
        options($("ctl-objective"), m.values, st.objective);
        $("ctl-higher").value = st.higher;
        if (m.cells === 0) return;
        const params = m.params.length > 0;
        $("views-noparams").hidden = params;
        for (const id of ["box-importance", "box-parallel", "box-slices"]) $(id).hidden = !params;
        const jobs = [
          api(run, "history", q()).then((v) => drawHistory($("chart-history"), v, $("note-history"))).catch(fail("note-history")),
          trials(),
        ];
        if (params) jobs.push(
          api(run, "importance", q()).then((v) => drawImportance($("chart-importance"), v, $("note-importance"))).catch(fail("note-importance")),
          api(run, "slices", q()).then((v) => { drawParallel($("chart-parallel"), v, $("note-parallel")); drawSlices($("slices"), v, $("note-slices")); })
            .catch(fail("note-slices")));
        $("box-curves").hidden = !m.curves;
        if (m.curves) jobs.push(api(run, "curves", Object.assign(q(), { field: st.field })).then((v) => {
          st.field = v.field; options($("ctl-field"), v.fields, v.field); drawCurves($("chart-curves"), v, $("note-curves"));
        }).catch(fail("note-curves")));
        $("box-screenings").hidden = !m.screenings;
        if (m.screenings) jobs.push(api(run, "screenings", q()).then((v) => drawScreenings($("chart-screenings"), v, $("note-screenings"))).catch(fail("note-screenings")));
        $("box-signals").hidden = !m.signals;
        if (m.signals) jobs.push(api(run, "signals", q()).then((v) => drawSignals($("signals"), v, $("note-signals"))).catch(fail("note-signals")));
        $("box-gap").hidden = !m.gap;
        if (m.gap) jobs.push(api(run, "gap", q()).then((v) => drawGap($("chart-gap"), v, $("note-gap"))).catch(fail("note-gap")));
        return Promise.all(jobs);
      }).catch(fail("note-history")).finally(() => { root.dataset.drawn = String(Number(root.dataset.drawn || 0) + 1); });
    }

    function trials() {
      const p = Object.assign(q(), { sort: st.sort, desc: st.desc, filter: st.filter, offset: st.offset || "" });
      return api(run, "trials", p).then((v) => {
        const table = $("trials-table");
        const head = document.createElement("tr");
        v.columns.forEach((c, i) => {
          const th = document.createElement("th");
          th.textContent = c;
          th.title = v.kinds[i] === "param" ? "hyperparameter" : v.kinds[i] === "value" ? "value" : "";
          if (st.sort === c) th.className = "sorted" + (st.desc === "1" ? "" : " asc");
          th.onclick = () => { st.desc = st.sort === c && st.desc !== "1" ? "1" : ""; st.sort = c; st.offset = 0; trials(); };
          head.appendChild(th);
        });
        table.tHead.replaceChildren(head);
        table.tBodies[0].replaceChildren(...v.rows.map((r) => {
          const tr = document.createElement("tr");
          r.forEach((x, i) => { const td = document.createElement("td"); td.textContent = fmt(x); if (v.kinds[i] === "label" && typeof x === "string") td.className = "text"; tr.appendChild(td); });
          return tr;
        }));
        $("trials-prev").disabled = v.offset === 0;
        $("trials-next").disabled = v.offset + v.rows.length >= v.matched;
        st.offset = v.offset;
        st.pageLen = v.rows.length;
        setNote($("note-trials"), "Trials " + (v.rows.length ? v.offset + 1 : 0) + "–" + (v.offset + v.rows.length) + " of " + v.matched +
          (v.matched !== v.total ? " matching (" + v.total + " in all)" : "") + "; every hyperparameter and every stored number a column. Click a heading to sort.");
      }).catch(fail("note-trials"));
    }

    $("ctl-group").onchange = (e) => { st.group = e.target.value; st.offset = 0; refresh(); };
    $("ctl-objective").onchange = (e) => { st.objective = e.target.value; refresh(); };
    $("ctl-higher").onchange = (e) => { st.higher = e.target.value; refresh(); };
    $("ctl-field").onchange = (e) => { st.field = e.target.value; refresh(); };
    $("ctl-compare").onchange = (e) => { if (e.target.value) location.href = "/compare?a=" + run + "&b=" + encodeURIComponent(e.target.value); };
    let typing;
    $("trials-filter").oninput = (e) => { clearTimeout(typing); typing = setTimeout(() => { st.filter = e.target.value; st.offset = 0; trials(); }, 300); };
    $("trials-prev").onclick = () => { st.offset = Math.max(0, st.offset - 500); trials(); };
    $("trials-next").onclick = () => { st.offset += st.pageLen || 0; trials(); };

    // Live: the page's event stream says when cells finish; the views are fetched again then.
    let lastDone = Number(($("done") || {}).textContent), pending = false, again = false;
    document.addEventListener("hyperflat:run", (e) => {
      const done = e.detail.run.done;
      if (done === lastDone) return;
      lastDone = done;
      if (pending) { again = true; return; }
      pending = true;
      const go = () => refresh().finally(() => { if (again) { again = false; go(); } else pending = false; });
      go();
    });
    refresh();
  }
})();
