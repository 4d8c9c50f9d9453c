// The control page: a big button for every command the daemon's profile takes (from
// GET /api/commands), inputs for commands with arguments, and a second tap to confirm the
// destructive ones. The token is entered once and kept in this browser (localStorage).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const CONFIRM_MS = 4000; // how long a destructive button stays armed for its second tap

  $("token").value = timerd.token();
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    timerd.setToken($("token").value);
    say("Token saved in this browser.", true);
  });

  function say(text, ok) {
    $("reply").textContent = text;
    $("reply").className = ok ? "reply ok" : "reply error";
  }

  async function send(name, inputs) {
    const args = inputs.map((input) => input.value.trim()).filter((v) => v !== "");
    const reply = await timerd.command(name, args);
    if (reply.ok) {
      say(`${[name, ...args].join(" ")}: done`, true);
    } else if (reply.http === 401) {
      say(`${name}: ${reply.error}. Enter the token above.`, false);
      $("token").focus();
    } else {
      say(`${name}: ${reply.error}`, false);
    }
  }

  function commandRow({ command, args, confirm }) {
    const row = document.createElement("div");
    row.className = "command";
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = command;
    button.dataset.command = command;
    if (confirm) button.classList.add("destructive");
    row.append(button);
    const inputs = args.map((arg) => {
      const input = document.createElement("input");
      input.placeholder = arg;
      input.setAttribute("aria-label", `${command} ${arg}`);
      row.append(input);
      return input;
    });
    let armed = null;
    button.addEventListener("click", () => {
      if (confirm && armed === null) {
        // A destructive command needs a second tap: a stray touch must not end a match.
        button.classList.add("armed");
        button.textContent = `tap again to ${command}`;
        armed = setTimeout(() => {
          armed = null;
          button.classList.remove("armed");
          button.textContent = command;
        }, CONFIRM_MS);
        return;
      }
      if (armed !== null) {
        clearTimeout(armed);
        armed = null;
        button.classList.remove("armed");
        button.textContent = command;
      }
      send(command, inputs);
    });
    return row;
  }

  async function loadCommands() {
    try {
      const table = await (await fetch("/api/commands")).json();
      $("control-off").hidden = table.control;
      $("commands").replaceChildren(...table.commands.map(commandRow));
    } catch (err) {
      say(`cannot load the commands (${err.message}); retrying`, false);
      setTimeout(loadCommands, 2000);
    }
  }

  let sync = null;
  const frame = () => {
    if (sync) {
      const s = timerd.current(sync);
      const [phase, cls] = timerd.phaseText(s);
      $("clock").textContent = timerd.mainClock(s);
      $("phase").textContent = phase;
      $("phase").className = `phase ${cls}`;
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);

  timerd.connect({
    onState: (next) => { sync = next; },
    onLink: (up) => {
      $("link").textContent = up ? "live" : "offline – reconnecting…";
      $("link").className = up ? "link up" : "link down";
      if (up) loadCommands(); // a restarted daemon may run another profile
    },
  });
})();
