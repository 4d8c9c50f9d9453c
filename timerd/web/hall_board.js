// The hall board: draws the board document (timerd/hall_board.py) as one card per table.
// Everything shown is computed by the desk; this only lays the cards out, fills them in and
// colours them by phase. It reconnects by itself when the desk restarts.
"use strict";

const LABELS = {
  idle: "ready", scheduled: "scheduled", pre_signal: "pre-signal", running: "running",
  paused: "paused", break: "break", shootout: "shootout", finished: "finished",
};
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

function draw(board) {
  set(document.body, "#hall", `hall ${board.hall}`);
  const online = board.tables.filter((t) => t.link === "online").length;
  set(document.body, "#count", `${online} of ${board.tables.length} tables online`);
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
    set(card, ".c-label", offline ? "OFFLINE" : (LABELS[row.phase] || row.phase));
    set(card, ".c-home", row.home || "Home");
    set(card, ".c-away", row.away || "Away");
    set(card, ".c-clock", row.clock);
    set(card, ".c-score", row.score);
    set(card, ".c-seen", [row.round, row.seen && `seen ${row.seen}`,
      row.version && `timerd ${row.version}`].filter(Boolean).join(" · "));
    set(card, ".c-warn", row.warnings.join("; "));
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
  socket.onopen = () => { link.textContent = "live"; link.className = "link up"; };
  socket.onmessage = (message) => draw(JSON.parse(message.data));
  socket.onclose = () => {
    link.textContent = "desk offline: reconnecting…";
    link.className = "link down";
    setTimeout(connect, 1000);
  };
}

window.addEventListener("resize", () => layout(cards.size));
connect();
