/* Leaderboard page helpers: sort by column, find a model by name, switch board.
   The static table is complete without this script; it only rearranges rows. */
(function () {
  "use strict";
  var table = document.getElementById("board");
  var tools = document.getElementById("board-tools");
  if (!table || !tools || !table.tHead) return;
  var slice = Array.prototype.slice;
  var groups = slice.call(table.tBodies).map(function (body) {
    return {
      body: body,
      head: body.querySelector("tr.tier-head"),
      rows: slice.call(body.rows).filter(function (r) { return !r.classList.contains("tier-head"); })
    };
  });
  var all = [];
  groups.forEach(function (g) { all = all.concat(g.rows); });
  // Sort keys from the cells themselves: the name, the best rank (a dash: unranked,
  // after every rank), the rating and the battles.
  function number(cell) {
    var v = cell ? parseFloat(cell.textContent.replace(/,/g, "")) : NaN;
    return isNaN(v) ? null : v;
  }
  var keys = all.map(function (r, i) {
    var name = r.querySelector("th bdi");
    name = name ? name.textContent.toLowerCase() : "";
    return {
      i: i,
      name: name,
      // the filter also finds the model's key and organisation (data-find, one per line)
      find: r.getAttribute("data-find") || name,
      rank: number(r.querySelector(".rk")),
      rating: number(r.querySelector(".rt")),
      battles: number(r.querySelector("td.battles"))
    };
  });
  var flat = document.createElement("tbody");
  flat.className = "flat";
  flat.hidden = true;
  table.appendChild(flat);
  var heads = slice.call(table.tHead.querySelectorAll("th[data-sort]"));
  var state = { key: "rank", dir: 1 };


  function sortBy(key) {
    state.dir = state.key === key ? -state.dir : (key === "rank" || key === "name" ? 1 : -1);
    state.key = key;
    var natural = key === "rank" && state.dir === 1;
    if (natural) {
      groups.forEach(function (g) {
        g.rows.forEach(function (r) { g.body.appendChild(r); });
        g.body.hidden = false;
      });
      flat.hidden = true;
    } else {
      keys.slice().sort(function (a, b) {
        var x = a[key], y = b[key];
        if (x === null || y === null) return (x === null) - (y === null) || a.i - b.i;
        return (x < y ? -1 : x > y ? 1 : 0) * state.dir || a.i - b.i;
      }).forEach(function (k) { flat.appendChild(all[k.i]); });
      groups.forEach(function (g) { g.body.hidden = true; });
      flat.hidden = false;
    }
    table.classList.toggle("sorted", !natural);
    heads.forEach(function (th) {
      if (th.getAttribute("data-sort") === key) {
        th.setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
      } else {
        th.removeAttribute("aria-sort");
      }
    });
    applyFilter();
  }

  heads.forEach(function (th) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    while (th.firstChild) button.appendChild(th.firstChild);
    var mark = document.createElement("span");
    mark.className = "sort-mark";
    mark.setAttribute("aria-hidden", "true");
    button.appendChild(mark);
    th.appendChild(button);
    button.addEventListener("click", function () { sortBy(th.getAttribute("data-sort")); });
  });

  var filter = document.getElementById("board-filter");
  var count = document.getElementById("board-count");
  function applyFilter() {
    var q = filter ? filter.value.trim().toLowerCase() : "";
    var shown = 0;
    all.forEach(function (r, i) {
      var hit = !q || keys[i].find.indexOf(q) >= 0;
      r.hidden = !hit;
      if (hit) shown += 1;
    });
    groups.forEach(function (g) {
      if (g.head) g.head.hidden = !g.rows.some(function (r) { return !r.hidden; });
    });
    if (count) count.textContent = q ? shown + " of " + all.length + " models match \u201c" + q + "\u201d" : "";
  }
  if (filter) filter.addEventListener("input", applyFilter);

  tools.hidden = false;
  // On a phone the board tabs are one sideways-scrolling row: show the current one.
  var nav = document.querySelector("nav.boards-nav");
  var current = nav && nav.querySelector("a[aria-current=page]");
  if (current && nav.scrollWidth > nav.clientWidth) {
    nav.scrollLeft = current.offsetLeft - (nav.clientWidth - current.offsetWidth) / 2;
  }
})();
