// The timeline page's inline style sheet and script: no network, no external fonts or scripts.
#include "harness/report/timeline.hpp"

namespace onejob::report {

std::string_view timeline_style() {
  return R"CSS(
body{font:13px/1.4 system-ui,sans-serif;margin:0 16px 40px;color:#1d232b;background:#fbfbfc}
h1{font-size:20px;margin:14px 0 6px}h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid #d5d9df}
h3{font-size:13px;margin:10px 0 4px}code,pre{font:12px/1.35 ui-monospace,monospace}
.verdict{padding:1px 8px;border-radius:3px;color:#fff}.verdict.pass{background:#2f8a46}.verdict.fail{background:#c0392b}
.facts{display:flex;flex-wrap:wrap;gap:2px 14px;margin:0}.facts dt{color:#69727d}.facts dd{margin:0 8px 0 0}
.replay code{background:#eef1f4;padding:2px 6px;user-select:all}
.violation{border-left:4px solid #c0392b;background:#fff4f2;padding:4px 10px;margin:8px 0}
.violation .rule{background:#c0392b;color:#fff;padding:0 6px;border-radius:3px}
.led-to{margin:4px 0;padding-left:22px}.led-to li{cursor:pointer}.offending code{background:#ffd9d3}
.marks{display:flex;flex-wrap:wrap;gap:4px;list-style:none;padding:0}
.mark{padding:1px 6px;border-radius:3px;background:#eceff2;color:#9aa3ad}.mark.reached{background:#dcefe1;color:#1d5e30}
.controls{display:flex;gap:8px;align-items:center;margin-bottom:6px}.controls button{min-width:28px}
#window{color:#69727d;margin-left:auto}
.lanes{display:flex;border:1px solid #d5d9df;background:#fff}
.lane-labels{flex:0 0 130px;padding-top:22px;border-right:1px solid #d5d9df}
.lane{height:26px;line-height:26px;padding:0 6px;overflow:hidden;white-space:nowrap;font-weight:600}
.lane.client{color:#1f5fa8}.lane.lb{color:#6b4fa0}.lane.api{color:#0f7a7a}.lane.worker{color:#9a5b00}
.lane.reconciler{color:#8a3d6b}.lane.certifier{color:#5c6b1f}.lane.store{color:#222}.lane.provider{color:#a33a3a}
.lane-plot{flex:1;overflow:hidden;cursor:grab}#lanes-svg{display:block}
.lane-bg{fill:#fff}.lane-bg.odd{fill:#f4f6f8}.tick{stroke:#e1e5ea}.ticklabel{fill:#69727d;font-size:10px}
.ev{stroke:#fff;stroke-width:.5}.ev.client{fill:#1f5fa8}.ev.lb{fill:#6b4fa0}.ev.api{fill:#0f7a7a}
.ev.worker{fill:#c27a10}.ev.reconciler{fill:#8a3d6b}.ev.certifier{fill:#5c6b1f}.ev.store{fill:#333}
.ev.provider{fill:#a33a3a}.ev.other{fill:#8b939c}
.ev.commit{fill:#111}.ev.winner{fill:#e2a400;stroke:#7a5800}.ev.discarded{fill:#fff;stroke:#c0392b;stroke-width:1.5}
.glyph{font-size:13px;text-anchor:middle;dominant-baseline:central;cursor:pointer}
.glyph.injected{fill:#d0021b;font-weight:700}
.edge{stroke:#7d8894;stroke-width:1;fill:none}.edge.response,.edge.reply{stroke-dasharray:4 2}
.edge.call{stroke:#c27a10}.commit-link{stroke:#333;stroke-width:.7;opacity:.5}
.fault-link{stroke:#d0021b;stroke-width:1.2;stroke-dasharray:3 2}
.paused{fill:#d0021b;opacity:.15}.agg{fill:#5b6875}.agg.injected{fill:#d0021b}
#violation-marker,.violation-ring{fill:none;stroke:#d0021b;stroke-width:2.5}
.evidence-ring{fill:none;stroke:#e2a400;stroke-width:2}
.selected{stroke:#000;stroke-width:2}
#detail{background:#f1f3f5;padding:6px 8px;min-height:18px;white-space:pre-wrap;margin:6px 0}
.legend{color:#4d5761;font-size:12px}.legend .injected{color:#d0021b}.legend .led{color:#e2a400}
.job{margin:8px 0 14px}.job.violated h3{color:#c0392b}.job.focus{outline:2px solid #e2a400}
.job .key{color:#4d5761;font-weight:400}.end{padding:0 6px;border-radius:3px;background:#eceff2;font-weight:400}
.end.succeeded{background:#dcefe1}.end.failed{background:#f6d5d1}.end.blocked{background:#fbe8c4}
.won-by{color:#7a5800;font-weight:400}.jobsvg{background:#fff;border:1px solid #e1e5ea;width:100%;height:auto}
.rowlabel{font-size:11px;fill:#1d232b}.axis{font-size:10px;fill:#69727d}
.bar{stroke:#fff;stroke-width:.5}span.bar{display:inline-block;padding:0 4px;color:#fff;font-size:11px}
.STARTING{fill:#9db7d5;background:#9db7d5}.RUNNING{fill:#3c7dc4;background:#3c7dc4}
.UNKNOWN{fill:#e39a2d;background:#e39a2d}.SUCCEEDED{fill:#2f8a46;background:#2f8a46}
.FAILED{fill:#c0392b;background:#c0392b}.CANCELLED{fill:#7f8a96;background:#7f8a96}
.DISCARDED{fill:#b9a6c9;background:#b9a6c9}
.commit{stroke:#111;stroke-width:1.2}.execution{fill:#a33a3a;stroke:#fff}
.cas{font-size:11px;font-weight:700;cursor:pointer}.cas.winner{fill:#7a5800}.cas.discarded{fill:#c0392b}
.cancel{font-size:11px;fill:#4d5761;font-weight:700}
.violation-marker{fill:none;stroke:#d0021b;stroke-width:2.5}
)CSS";
}

std::string_view timeline_script() {
  return R"JS(
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('trace-data').textContent);
  const ev = data.events;  // [t_us, lane, kind, flags, job, attempt, peer lane, text]
  const base = data.first;  // the history index of ev[0] (a page of a long run holds a window)
  const lanes = data.lanes;
  const kinds = data.kinds;
  const INJECTED = 1, VIOLATION = 2, EVIDENCE = 4, COMMIT = 8, WINNER = 16, DISCARDED = 32;
  const NS = 'http://www.w3.org/2000/svg';
  const LANE_H = 26, TOP = 22, MAX_DRAWN = 3000, COLUMN = 3;
  const svg = document.getElementById('lanes-svg');
  const plot = svg.parentElement;
  const edges = data.edges.slice().sort((a, b) => a[0] - b[0]);
  const tFirst = ev.length ? ev[0][0] : 0;
  // The view opens on the run's activity: its end marker alone does not stretch the axis.
  let lastActive = ev.length - 1;
  while (lastActive > 0 && kinds[ev[lastActive][2]] === 'run.end') --lastActive;
  const tLast = ev.length ? Math.max(ev[lastActive][0], tFirst + 1) : 1;
  const pad = (tLast - tFirst) * 0.01 + 1;
  let view = {from: tFirst - pad, to: tLast + pad};
  const filter = {job: 0, node: -1, faultsOnly: false};
  let selected = -1;

  function lowerBound(t) {
    let lo = 0, hi = ev.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ev[mid][0] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function passes(e) {
    if (filter.job && e[4] !== filter.job) return false;
    if (filter.node >= 0 && e[1] !== filter.node && e[6] !== filter.node) return false;
    if (filter.faultsOnly && !(e[3] & (INJECTED | VIOLATION))) return false;
    return true;
  }
  function fmt(us) {
    const s = us / 1e6;
    if (s === 0) return '0s';
    return (Math.abs(s) >= 100 ? s.toFixed(1) : Math.abs(s) >= 1 ? s.toFixed(3) : s.toFixed(6)) + 's';
  }
  function el(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function laneY(lane) { return TOP + lane * LANE_H + LANE_H / 2; }
  function role(lane) { return lane >= 0 && lane < lanes.length ? lanes[lane].role : 'other'; }
  function faultGlyph(e) {
    const kind = kinds[e[2]], text = e[7];
    if (kind === 'node.crash') return '☠';
    if (kind === 'node.pause') return '‖';
    if (kind === 'node.start') return '▶';
    if (/fault=(duplicate)/.test(text)) return '⇉';
    if (/fault=(delay|reorder)/.test(text)) return '◷';
    if (/fault=(reset|connection reset)/.test(text)) return '↯';
    return '✕';
  }
  function title(i) {
    const e = ev[i];
    return '#' + (i + 1 + base) + ' ' + fmt(e[0]) + ' ' + (lanes[e[1]] ? lanes[e[1]].name : '?') + ' ' +
        kinds[e[2]] + (e[3] & INJECTED ? ' (injected)' : '') + '\n' + e[7];
  }

  function drawEvent(g, i, x) {
    const e = ev[i], flags = e[3], y = laneY(e[1]);
    let node;
    if (flags & INJECTED) {
      const pause = kinds[e[2]] === 'node.pause' && /until_us=(\d+)/.exec(e[7]);
      if (pause) {
        const until = (+pause[1] - view.from) / (view.to - view.from) * (+svg.getAttribute('width'));
        g.appendChild(el('rect', {class: 'paused', x: x, y: y - 8, width: Math.max(2, until - x),
                                  height: 16}));
      }
      if (e[6] >= 0 && e[6] !== e[1]) {
        g.appendChild(el('line', {class: 'fault-link', x1: x, x2: x, y1: y, y2: laneY(e[6])}));
      }
      node = el('text', {class: 'glyph injected', x: x, y: y}, faultGlyph(e));
    } else if (flags & WINNER) {
      node = el('text', {class: 'glyph', x: x, y: y, fill: '#e2a400'}, '★');
    } else if (flags & DISCARDED) {
      node = el('text', {class: 'glyph', x: x, y: y, fill: '#c0392b'}, '✗');
    } else if (flags & COMMIT) {
      if (e[6] >= 0) {
        g.appendChild(el('line', {class: 'commit-link', x1: x, x2: x, y1: laneY(e[6]), y2: y}));
      }
      node = el('rect', {class: 'ev commit', x: x - 2, y: y - 6, width: 4, height: 12});
    } else {
      node = el('circle', {class: 'ev ' + role(e[1]), cx: x, cy: y, r: 4});
    }
    node.setAttribute('data-i', i);
    if (i === selected) node.classList.add('selected');
    node.appendChild(el('title', {}, title(i)));
    g.appendChild(node);
    if ((flags & EVIDENCE) && !(flags & VIOLATION)) {
      g.appendChild(el('circle', {class: 'evidence-ring', cx: x, cy: y, r: 8, 'data-i': i}));
    }
    if (flags & VIOLATION) {
      const ring = el('circle', {class: 'violation-ring', cx: x, cy: y, r: 10, 'data-i': i});
      if (!document.getElementById('violation-marker')) ring.id = 'violation-marker';
      g.appendChild(ring);
    }
  }

  function render() {
    const width = Math.max(400, plot.clientWidth || 1000);
    const height = TOP + lanes.length * LANE_H + 8;
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    const span = view.to - view.from;
    const x = t => (t - view.from) / span * width;
    const frag = document.createDocumentFragment();
    const back = el('g', {}), front = el('g', {});
    for (let l = 0; l < lanes.length; ++l) {
      back.appendChild(el('rect', {class: 'lane-bg' + (l % 2 ? ' odd' : ''), x: 0,
                                   y: TOP + l * LANE_H, width: width, height: LANE_H}));
    }
    const step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    const tick = span / step > 30 ? step * 5 : span / step > 12 ? step * 2 : step;
    for (let t = Math.ceil(view.from / tick) * tick; t <= view.to; t += tick) {
      back.appendChild(el('line', {class: 'tick', x1: x(t), x2: x(t), y1: 14, y2: height}));
      back.appendChild(el('text', {class: 'ticklabel', x: x(t) + 2, y: 11}, fmt(t)));
    }
    const a = lowerBound(view.from), b = lowerBound(view.to + 1);
    const shown = [];
    for (let i = a; i < b; ++i) if (passes(ev[i])) shown.push(i);
    let drawn = 0;
    if (shown.length <= MAX_DRAWN) {
      const inView = new Set(shown);
      let k = 0;
      while (k < edges.length && edges[k][0] < a) ++k;
      for (; k < edges.length && edges[k][0] < b; ++k) {
        const [from, to, kind] = edges[k];
        if (!inView.has(from) || !(inView.has(to) || to >= b)) continue;
        const e1 = ev[from], e2 = ev[to];
        front.appendChild(el('line', {class: 'edge ' + kind, x1: x(e1[0]), y1: laneY(e1[1]),
                                      x2: x(e2[0]), y2: laneY(e2[1]),
                                      'marker-end': 'url(#arrow)'}));
      }
      for (const i of shown) { drawEvent(front, i, x(ev[i][0])); ++drawn; }
    } else {
      // Too many to draw one by one: per lane, a bar per column of pixels, darker with more
      // events; the injected faults and the violations are still drawn one by one.
      const columns = Math.ceil(width / COLUMN);
      const counts = new Map();
      const special = [];
      for (const i of shown) {
        const e = ev[i];
        if (e[3] & (INJECTED | VIOLATION | WINNER | DISCARDED)) special.push(i);
        const key = e[1] * columns + Math.floor(x(e[0]) / COLUMN);
        counts.set(key, (counts.get(key) || 0) + 1);
      }
      for (const [key, count] of counts) {
        const lane = Math.floor(key / columns), column = key % columns;
        const h = Math.min(LANE_H - 4, 4 + Math.log2(count) * 3);
        front.appendChild(el('rect', {class: 'agg', x: column * COLUMN, width: COLUMN,
                                      y: laneY(lane) - h / 2, height: h,
                                      opacity: Math.min(1, 0.3 + Math.log10(count) / 2)}));
        ++drawn;
      }
      const every = Math.max(1, Math.ceil(special.length / MAX_DRAWN));
      for (let s = 0; s < special.length; s += every) {
        drawEvent(front, special[s], x(ev[special[s]][0]));
        ++drawn;
      }
    }
    const defs = el('defs', {});
    const marker = el('marker', {id: 'arrow', viewBox: '0 0 6 6', refX: 6, refY: 3,
                                 markerWidth: 6, markerHeight: 6, orient: 'auto'});
    marker.appendChild(el('path', {d: 'M0,0 L6,3 L0,6 z', fill: '#7d8894'}));
    defs.appendChild(marker);
    frag.appendChild(defs);
    frag.appendChild(back);
    frag.appendChild(front);
    svg.replaceChildren(frag);
    document.getElementById('window').textContent = fmt(Math.max(view.from, 0)) + ' – ' +
        fmt(view.to) + ' · ' + shown.length + ' events in view' +
        (shown.length > MAX_DRAWN ? ' (aggregated; zoom in for each one)' : '');
    svg.dataset.drawn = drawn;
    svg.dataset.inView = shown.length;
  }

  function zoom(factor, at) {
    const span = view.to - view.from;
    const center = at === undefined ? view.from + span / 2 : at;
    const next = Math.max(span * factor, 10);
    const ratio = (center - view.from) / span;
    view = {from: center - next * ratio, to: center - next * ratio + next};
    render();
  }
  function focusEvent(i) {
    if (i < 0 || i >= ev.length) return;
    selected = i;
    const span = Math.min(view.to - view.from, (tLast - tFirst) / 10 + 1000);
    view = {from: ev[i][0] - span / 2, to: ev[i][0] + span / 2};
    document.getElementById('detail').textContent = title(i);
    render();
  }
  document.getElementById('zoom-in').onclick = () => zoom(0.5);
  document.getElementById('zoom-out').onclick = () => zoom(2);
  document.getElementById('zoom-reset').onclick = () => {
    view = {from: tFirst - pad, to: tLast + pad};
    render();
  };
  // The first violation's offending event selected, in a window that holds it and all of its
  // evidence (both winners of a two-winner job, however far apart), with a margin.
  function openOnViolation() {
    const focus = data.opening || [];
    if (!focus.length) return false;
    let lo = ev[focus[0]][0], hi = lo;
    for (const i of focus) { lo = Math.min(lo, ev[i][0]); hi = Math.max(hi, ev[i][0]); }
    const margin = Math.max((hi - lo) * 0.08, 1000);
    view = {from: lo - margin, to: hi + margin};
    selected = focus[0];
    document.getElementById('detail').textContent = title(selected);
    render();
    return true;
  }
  document.getElementById('to-violation').onclick = openOnViolation;
  document.getElementById('job-filter').onchange = (event) => {
    filter.job = parseInt(event.target.value, 10) || 0;
    document.querySelectorAll('.job.focus').forEach(n => n.classList.remove('focus'));
    const job = document.getElementById('job-' + filter.job);
    if (job) job.classList.add('focus');
    render();
  };
  document.getElementById('node-filter').onchange = (event) => {
    filter.node = lanes.findIndex(l => l.name === event.target.value);
    render();
  };
  document.getElementById('faults-only').onchange = (event) => {
    filter.faultsOnly = event.target.checked;
    render();
  };
  plot.addEventListener('wheel', (event) => {
    event.preventDefault();
    const rect = svg.getBoundingClientRect();
    const at = view.from + (event.clientX - rect.left) / rect.width * (view.to - view.from);
    zoom(event.deltaY < 0 ? 0.8 : 1.25, at);
  }, {passive: false});
  let drag = null;
  plot.addEventListener('mousedown', (event) => { drag = {x: event.clientX, view: view}; });
  window.addEventListener('mouseup', () => { drag = null; });
  window.addEventListener('mousemove', (event) => {
    if (!drag) return;
    const shift = (drag.x - event.clientX) / (plot.clientWidth || 1000) *
        (drag.view.to - drag.view.from);
    view = {from: drag.view.from + shift, to: drag.view.to + shift};
    render();
  });
  svg.addEventListener('click', (event) => {
    const i = event.target.getAttribute('data-i');
    if (i === null) return;
    selected = +i;
    document.getElementById('detail').textContent = title(selected);
    render();
  });
  document.querySelectorAll('[data-seq]').forEach((node) => {
    node.addEventListener('click', () => {
      focusEvent(+node.getAttribute('data-seq') - 1 - base);
      document.getElementById('timeline').scrollIntoView();
    });
  });
  window.addEventListener('resize', render);
  // A failing run opens on its violations' evidence; a passing one on the whole run.
  if (!openOnViolation()) render();
  document.body.dataset.renderMs = performance.now().toFixed(0);
  document.body.dataset.rendered = 'yes';
})();
)JS";
}

}  // namespace onejob::report
