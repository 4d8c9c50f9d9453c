// The hall's round on stream (`timerd hall board`, `/overlay`): every table's names, goals
// and clock over the hall camera, on a transparent page. It draws the board document
// (timerd/tools/hall_board.py), as the board does, in the page's language; it shows no error
// on air: a table that is away is dimmed, and so is everything while the desk is.
// URL parameters (docs/hall.md, "The round on stream"): `layout` (ticker: one line along an
// edge; grid: a column of rows in a corner), `edge`, `corner`, `scale`, `lang`.
"use strict";

(() => {
  const { t } = timerd;
  timerd.overlayFrame("top-right");
  const layout = timerd.urlOption("layout", "ticker",
    (x) => (["ticker", "grid"].includes(x) ? x : undefined));
  const edge = timerd.urlOption("edge", "bottom",
    (x) => (["top", "bottom"].includes(x) ? x : undefined));
  document.body.classList.add(`layout-${layout}`);
  document.body.dataset.edge = edge;

  const label = document.getElementById("round-label");
  const list = document.getElementById("round-tables");
  const template = document.getElementById("item");
  const items = new Map();

  const set = (el, text) => { if (el.textContent !== text) el.textContent = text; };

  // The clock cell: the table's clock face; "Final" once it finished; the start's countdown.
  const clockText = (row) => (row.phase === "finished" ? t("overlay.final") : row.clock);

  function fill(item, row) {
    const [home, away] = item.querySelectorAll(".r-side");
    set(item.querySelector(".r-table"), row.table);
    for (const [el, side] of [[home, "home"], [away, "away"]]) {
      set(el.querySelector(".r-name"), row[side] || t(`side.${side}`));
      const goals = row.goals?.[side];
      set(el.querySelector(".r-goals"), Number.isFinite(goals) ? String(goals) : "–");
    }
    set(item.querySelector(".r-clock"), clockText(row));
    const cls = ["r-item", row.link === "online" ? "" : "r-offline",
      row.phase === "paused" ? "r-paused" : "", row.phase === "finished" ? "r-finished" : "",
      row.clock_kind === "start" ? "r-start" : ""].filter(Boolean).join(" ");
    if (item.className !== cls) item.className = cls;
  }

  // The round's name: the one the tables share (the schedule's), else the hall's.
  function roundText(board) {
    const rounds = new Set(board.tables.map((row) => row.round).filter(Boolean));
    return rounds.size === 1 ? t("web.round", { round: [...rounds][0] })
      : t("hall.name", { hall: board.hall });
  }

  let last = null;
  function draw(board) {
    last = board;
    timerd.chooseLanguage(board.language);
    set(label, roundText(board));
    const names = new Set(board.tables.map((row) => row.table));
    for (const [name, item] of items) {
      if (!names.has(name)) { item.remove(); items.delete(name); }
    }
    board.tables.forEach((row, i) => {
      let item = items.get(row.table);
      if (!item) {
        item = template.content.firstElementChild.cloneNode(true);
        item.dataset.table = row.table;
        items.set(row.table, item);
      }
      fill(item, row);
      if (list.children[i] !== item) list.insertBefore(item, list.children[i] || null);
    });
    crawl();
  }

  // A ticker longer than the screen crawls to its end and back, slowly enough to read
  // (CRAWL_PX_S), pausing at each end; one that fits stands still.
  const CRAWL_PX_S = 60;
  function crawl() {
    const over = layout === "ticker" ? Math.max(0, list.scrollWidth - list.clientWidth) : 0;
    const was = Number(list.dataset.over || 0);
    if (Math.abs(over - was) < 2) return;
    list.dataset.over = String(over);
    list.style.setProperty("--over", `${over}px`);
    list.style.setProperty("--crawl-s", `${Math.max(4, over / CRAWL_PX_S)}s`);
    list.classList.toggle("crawl", over > 0);
  }

  // The board's stream, again after a second whenever the desk goes away.
  function follow() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/api/board/stream`);
    socket.onopen = () => { document.body.dataset.link = "up"; };
    socket.onmessage = (message) => {
      document.body.classList.remove("offline");
      draw(JSON.parse(message.data));
    };
    socket.onclose = () => {
      document.body.dataset.link = "down";
      document.body.classList.add("offline");
      setTimeout(follow, 1000);
    };
  }

  document.addEventListener("timerd-language", () => { if (last) draw(last); });
  timerd.loadTexts().then(follow);
})();
