// chemmy table console: the roads (scoreboards) of a punto banco shoe,
// drawn as SVG from chemmy.table.v1.Roads (the table's view or GetRoads):
// grids six rows high, filled column by column, as the table computes
// them (col and row given, row 0 at the top).
//   - bead plate: one filled circle per coup, red bank, blue player, green
//     tie, with the winning total; a red dot (top left) for a bank pair, a
//     blue dot (bottom right) for a player pair;
//   - big road: a hollow circle per bank or player win, a green stroke
//     across it for the ties after it (their count when more than one);
//   - big eye boy: hollow circles, small road: filled circles, cockroach
//     pig: strokes; red when the big road repeats its pattern, blue when
//     it breaks it.
// The other games have a bead plate of the coups the console knows
// (drawBeads): red the bank won, blue it lost, green a stand-off.
"use strict";

const ChemmyRoads = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const RED = "#c62828", BLUE = "#1565c0", GREEN = "#2e7d32";
  const colour = { ROAD_WINNER_BANK: RED, ROAD_WINNER_PLAYER: BLUE, ROAD_WINNER_TIE: GREEN };
  const winnerName = { ROAD_WINNER_BANK: "bank", ROAD_WINNER_PLAYER: "player", ROAD_WINNER_TIE: "tie" };
  const ROWS = 6;
  // say is a text of the roads in the console's language (words).
  let say = (text) => text;

  function el(name, attrs) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }

  // grid makes an SVG of cols columns of cell units with its grid lines.
  function grid(id, items, cell, minCols) {
    let cols = minCols;
    for (const it of items) cols = Math.max(cols, (it.col || 0) + 1);
    const w = cols * cell, h = ROWS * cell;
    const svg = el("svg", { id, class: "road", viewBox: "0 0 " + w + " " + h, width: w, height: h, role: "img" });
    svg.append(el("rect", { x: 0, y: 0, width: w, height: h, class: "road-bg", fill: "#fbfaf5" }));
    for (let c = 1; c < cols; c++) svg.append(el("line", { x1: c * cell, y1: 0, x2: c * cell, y2: h, stroke: "#d8d4c8", "stroke-width": 0.5 }));
    for (let r = 1; r < ROWS; r++) svg.append(el("line", { x1: 0, y1: r * cell, x2: w, y2: r * cell, stroke: "#d8d4c8", "stroke-width": 0.5 }));
    return svg;
  }

  const centre = (it, cell) => [((it.col || 0) + 0.5) * cell, ((it.row || 0) + 0.5) * cell];

  function beadPlate(beads) {
    const cell = 24, svg = grid("bead-plate", beads, cell, 12);
    for (const b of beads) {
      const [x, y] = centre(b, cell);
      svg.append(el("circle", { cx: x, cy: y, r: cell * 0.42, fill: colour[b.winner] || "#888", class: "bead", "data-winner": winnerName[b.winner] || "", "data-total": b.total || 0 }));
      const t = el("text", { x, y: y + 4, "text-anchor": "middle", "font-size": 11, fill: "#fff", "font-weight": "bold" });
      t.textContent = String(b.total || 0);
      svg.append(t);
      if (b.bankerPair) svg.append(el("circle", { cx: x - cell * 0.3, cy: y - cell * 0.3, r: cell * 0.1, fill: RED, stroke: "#fff", class: "pair" }));
      if (b.playerPair) svg.append(el("circle", { cx: x + cell * 0.3, cy: y + cell * 0.3, r: cell * 0.1, fill: BLUE, stroke: "#fff", class: "pair" }));
    }
    return svg;
  }

  function bigRoad(cells) {
    const cell = 20, svg = grid("big-road", cells, cell, 24);
    for (const c of cells) {
      const [x, y] = centre(c, cell);
      svg.append(el("circle", { cx: x, cy: y, r: cell * 0.38, fill: "none", stroke: colour[c.winner] || "#888", "stroke-width": 2.5, class: "cell", "data-winner": winnerName[c.winner] || "" }));
      if (c.ties) {
        svg.append(el("line", { x1: x - cell * 0.35, y1: y + cell * 0.35, x2: x + cell * 0.35, y2: y - cell * 0.35, stroke: GREEN, "stroke-width": 2, class: "tie" }));
        if (c.ties > 1) {
          const t = el("text", { x, y: y + 4, "text-anchor": "middle", "font-size": 10, fill: GREEN, "font-weight": "bold" });
          t.textContent = String(c.ties);
          svg.append(t);
        }
      }
    }
    return svg;
  }

  // derived draws a derived road's marks as shape: "ring", "dot" or "slash".
  function derived(id, marks, shape) {
    const cell = 12, svg = grid(id, marks, cell, 36);
    for (const m of marks) {
      const [x, y] = centre(m, cell), c = m.red ? RED : BLUE, side = m.red ? "red" : "blue";
      if (shape === "slash") {
        svg.append(el("line", { x1: x - cell * 0.35, y1: y + cell * 0.35, x2: x + cell * 0.35, y2: y - cell * 0.35, stroke: c, "stroke-width": 2.5, class: "mark", "data-colour": side }));
      } else if (shape === "ring") {
        svg.append(el("circle", { cx: x, cy: y, r: cell * 0.36, fill: "none", stroke: c, "stroke-width": 2, class: "mark", "data-colour": side }));
      } else {
        svg.append(el("circle", { cx: x, cy: y, r: cell * 0.38, fill: c, class: "mark", "data-colour": side }));
      }
    }
    return svg;
  }

  function figure(title, svg, count) {
    const f = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = say(title) + (count === undefined ? "" : " (" + count + ")");
    svg.setAttribute("aria-label", cap.textContent);
    f.append(cap, svg);
    return f;
  }

  // draw replaces container's content with the roads r (a Roads message in
  // protobuf JSON; absent fields are empty).
  function draw(container, r) {
    r = r || {};
    const beads = r.beadPlate || [];
    container.textContent = "";
    const h = document.createElement("h3");
    h.textContent = say("Roads");
    const counts = document.createElement("p");
    counts.id = "road-counts";
    counts.textContent = say("shoe") + " " + (r.shoeNumber || 1) + ": " + say("bank") + " " + (r.bankWins || 0) + " · " + say("player") + " " + (r.playerWins || 0) +
      " · " + say("tie") + " " + (r.ties || 0);
    container.append(h, counts,
      figure("Bead plate", beadPlate(beads), beads.length),
      figure("Big road", bigRoad(r.bigRoad || [])),
      figure("Big eye boy", derived("big-eye-boy", r.bigEyeBoy || [], "ring")),
      figure("Small road", derived("small-road", r.smallRoad || [], "dot")),
      figure("Cockroach pig", derived("cockroach-pig", r.cockroachPig || [], "slash")));
  }

  // drawBeads replaces container's content with a bead plate of the
  // games without the table's roads (chemin de fer, banque, the old
  // game): beads [{winner: "ROAD_WINNER_BANK" | ..._PLAYER | ..._TIE,
  // number}] in coup order, six to a column; caption says whose coups.
  function drawBeads(container, beads, caption) {
    container.textContent = "";
    const laid = beads.map((b, i) => ({ col: Math.floor(i / ROWS), row: i % ROWS, winner: b.winner, total: b.number }));
    const svg = grid("bead-plate", laid, 24, 12);
    for (const b of laid) {
      const [x, y] = centre(b, 24);
      svg.append(el("circle", { cx: x, cy: y, r: 24 * 0.42, fill: colour[b.winner] || "#888", class: "bead", "data-winner": winnerName[b.winner] || "", "data-coup": b.total || 0 }));
      const t = el("text", { x, y: y + 4, "text-anchor": "middle", "font-size": 10, fill: "#fff", "font-weight": "bold" });
      t.textContent = ({ ROAD_WINNER_BANK: "B", ROAD_WINNER_PLAYER: "P", ROAD_WINNER_TIE: "T" })[b.winner] || "?";
      svg.append(t);
    }
    const h = document.createElement("h3");
    h.textContent = caption;
    container.append(h, figure("Bead plate", svg, beads.length));
  }

  // words sets how the roads' texts are said (a function of the English
  // text; the console's tr).
  function words(fn) { say = fn; }

  return { draw, drawBeads, words };
})();
