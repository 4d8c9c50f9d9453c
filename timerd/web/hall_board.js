// The hall board: draws the board document (timerd/hall_board.py) as one card per table.
// Everything shown is computed by the desk; this only lays the cards out, fills them in in
// the page's language (timerd.js: the scoreboard's catalogue, ?lang=en|sl|sk) and colours
// them by phase. It reconnects by itself when the desk restarts.
"use strict";

const { t } = timerd;
// A phase as its word: the terminal's phase words (term.phase.*), "ready" for idle.
const label = (phase) => (phase === "idle" ? t("hall.ready")
  : phase === "unreadable" ? t("hall.unreadable") : timerd.textOr(`term.phase.${phase}`, phase));
const say = (note) => t(note.key, note.params);
const tables = document.getElementById("tables");
const template = document.getElementById("card");
const cards = new Map();

if (new URLSearchParams(location.search).get("kiosk") === "1") {
  document.body.classList.add("kiosk");
}

// The grid with the largest cards (about 4:3) that fits n of them on the screen.
function layout(n) {
  const width = tables.clientWidth, height = tables.clientHeight;
  let best = { cols: 1, rows: Math.max(n, 1), size: 0 };
  for (let cols = 1; cols <= Math.max(n, 1); cols++) {
    const rows = Math.ceil(Math.max(n, 1) / cols);
    const size = Math.min(width / cols / 4, height / rows / 3);
    if (size > best.size) best = { cols, rows, size };
  }
  tables.style.setProperty("--cols", best.cols);
  tables.style.setProperty("--rows", best.rows);
}

function set(card, selector, text) {
  const element = card.querySelector(selector);
  if (element.textContent !== text) element.textContent = text;
}

// Only what changed is touched: with 100 tables a redraw that moved every card or reset
// every class would make the browser lay out the whole page four times a second.
let order = "";

let last = null;

function draw(board) {
  last = board;
  timerd.chooseLanguage(board.language);
  set(document.body, "#hall", t("hall.name", { hall: board.hall }));
  const online = board.tables.filter((row) => row.link === "online").length;
  set(document.body, "#count", t("hall.online_count", { online, total: board.tables.length }));
  set(document.body, "#notice", board.notices.map(say).join("; "));
  const names = new Set(board.tables.map((t) => t.table));
  for (const [name, card] of cards) {
    if (!names.has(name)) { card.remove(); cards.delete(name); }
  }
  for (const row of board.tables) {
    let card = cards.get(row.table);
    if (!card) {
      card = template.content.firstElementChild.cloneNode(true);
      card.dataset.table = row.table;
      cards.set(row.table, card);
    }
    const offline = row.link !== "online";
    // The phase as a data attribute: timerd.css gives the scoreboard's phase classes
    // (.running, .paused) colours and sizes of their own.
    if (card.dataset.phase !== row.phase) card.dataset.phase = row.phase;
    const className = offline ? "card offline" : "card";
    if (card.className !== className) card.className = className;
    set(card, ".c-name", row.table);
    set(card, ".c-label", offline ? t("hall.offline") : label(row.phase));
    set(card, ".c-home", row.home || t("side.home"));
    set(card, ".c-away", row.away || t("side.away"));
    set(card, ".c-clock", row.clock);
    if (card.dataset.clock !== (row.clock_kind || "")) card.dataset.clock = row.clock_kind || "";
    set(card, ".c-score", row.score);
    set(card, ".c-seen", [row.round && t("web.round", { round: row.round }),
      row.seen_s !== null && t("hall.seen", { s: Math.round(row.seen_s) }),
      row.version && t("web.version", { version: row.version })].filter(Boolean).join(" · "));
    set(card, ".c-warn", row.warnings.map(say).join("; "));
  }
  const newOrder = board.tables.map((t) => t.table).join("\n");
  if (newOrder !== order) {  // a table came or went: the cards in the board's order
    order = newOrder;
    for (const row of board.tables) tables.appendChild(cards.get(row.table));
    layout(board.tables.length);
  }
}

function connect() {
  const link = document.getElementById("link");
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/api/board/stream`);
  socket.onopen = () => timerd.showLink(link, true);
  socket.onmessage = (message) => draw(JSON.parse(message.data));
  socket.onclose = () => {
    timerd.showLink(link, false, "hall.desk_offline");
    setTimeout(connect, 1000);
  };
}

window.addEventListener("resize", () => layout(cards.size));
// A new language (the document's `[ui] language`, or ?lang=): every card again in it.
document.addEventListener("timerd-language", () => { if (last) draw(last); });
timerd.loadTexts().then(connect);
