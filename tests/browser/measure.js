// Layout facts of the loaded page, read by tests/test_publish_browser.py through
// Runtime.evaluate. One expression, returns a plain JSON-able object.
(() => {
  const vw = document.documentElement.clientWidth;
  const vh = window.innerHeight;
  const describe = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.documentElement && parts.length < 4; e = e.parentElement) {
      let s = e.tagName.toLowerCase();
      if (e.id) s += "#" + e.id;
      else if (typeof e.className === "string" && e.className.trim())
        s += "." + e.className.trim().split(/\s+/).join(".");
      parts.unshift(s);
    }
    return parts.join(" > ");
  };
  // Inside a box that clips or scrolls sideways (the table's own scroller, a
  // truncated name): such an element cannot widen the page.
  const contained = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") return true;
    }
    return false;
  };
  const wide = new Set();
  const offenders = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= 0) continue;
    if ((r.right > vw + 0.5 || r.left < -0.5) && !contained(el)) {
      wide.add(el);
      // Report the outermost element of each overflowing subtree only.
      if (!wide.has(el.parentElement)) {
        offenders.push(`${describe(el)} [left ${Math.round(r.left)}, right ${Math.round(r.right)}]`);
      }
    }
  }
  const rect = (sel) => {
    const el = document.querySelector(sel);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { selector: sel, top: r.top, bottom: r.bottom, text: el.innerText.slice(0, 80) };
  };
  return {
    viewportWidth: vw,
    innerWidth: window.innerWidth,
    innerHeight: vh,
    scrollWidth: document.documentElement.scrollWidth,
    scrollHeight: document.documentElement.scrollHeight,
    offenders: offenders.slice(0, 20),
    boardRow: rect("table.board tbody tr:has(> th[scope=row])"),
    // interval charts drawn (ratings; on a baseline design also scores against the baseline)
    intervalCharts: [...document.querySelectorAll("main svg.chart.intervals")]
      .filter((c) => c.getBoundingClientRect().width > 0).length,
    firstRow: rect("main table tbody tr:has(> th[scope=row]), main .probe, main .board-list li"),
    // every link of the header's board menu, where it is drawn
    menu: [...document.querySelectorAll("nav.boards-nav a")].map((a) => {
      const r = a.getBoundingClientRect();
      return { text: a.innerText, left: r.left, right: r.right, width: r.width };
    }),
    // the smallest text drawn in a chart, in CSS pixels: font size times the SVG's
    // scale (the length of the matrix's first column: rotated labels count in full)
    minChartText: Math.min(
      ...[...document.querySelectorAll("main svg text")]
        .filter((t) => t.getBoundingClientRect().width > 0)
        .map((t) => {
          const m = t.getScreenCTM();
          return parseFloat(getComputedStyle(t).fontSize) * (m ? Math.hypot(m.a, m.b) : 1);
        }),
      99
    ),
    // text cut at its box's edge (issue 39 item 8): a board row's organisation and
    // licence line, an opponent's name, a headline number of the model and audit pages
    cut: [...document.querySelectorAll(
      "table.board .sub, table.record .name, dl.stats dd, table.agreement-pairs .name"
    )]
      .filter((el) => el.getBoundingClientRect().width > 0 &&
        (el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > vw + 0.5))
      .slice(0, 10)
      .map((el) => `${describe(el)}: ${el.innerText.slice(0, 60)}`),
    title: document.title,
    heading: (document.querySelector("main h1") || {}).innerText || "",
    // the board's Raw / Style-controlled switch: the entry this page is
    switchCurrent: (document.querySelector(".switch a[aria-current=page]") || {}).innerText || null,
    // heatmap cells: the colour drawn, and the light (fill) and dark (--dk) ones they carry
    heatCells: [...document.querySelectorAll("svg.heat .cells [style*='--dk']")]
      .slice(0, 60)
      .map((el) => ({
        drawn: getComputedStyle(el).fill,
        light: el.style.fill,
        dark: el.style.getPropertyValue("--dk").trim(),
      })),
  };
})()
