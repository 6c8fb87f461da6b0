
// ---- several live views sharing one slider (Compare) ----
//
// Appended to live.js by ui/live_view/__init__.py (one module: these functions are hoisted there).
// Two optional payload fields, absent on the Playground (which then draws as before):
//   data.group: a name; the views sharing it follow one slider.
//   data.role:  "slider" -- only the slider (its text is empty); each of its moves redraws the group's columns;
//               "column" -- a title ("<data.label> · size"), one count line and the text; no slider of its own.
// The slider reports the final size to the server (as the Playground's); columns never report.
// User text stays data: titles and counts are set with textContent.

const GROUPS = (window.__bpeLiveGroups = window.__bpeLiveGroups || new Map());

function groupConfigure(view, data) {
  // called for every payload with a role, before it is decoded: join the group, keep only the role's parts
  const role = data.role;
  let g = GROUPS.get(data.group);
  if (!g) GROUPS.set(data.group, (g = new Set()));
  g.add(view);
  view.root.classList.toggle("live-role-" + role, true);
  if (role === "slider") {
    for (const part of [view.counts, view.view, view.note, view.idsBox]) part.remove();
  } else {
    view.controls.remove();
    view.counts.remove();
    view.idsBox.remove();
    view.setTriggerValue = null; // a click on a token opens nothing on Compare
    if (!view.colHead) {
      view.colHead = el("div", "live-col-head");
      view.colTitle = el("strong", "live-col-title");
      view.colCount = el("div", "live-col-count");
      view.colCount.style.cssText = "font-size: 14px; opacity: .6; margin: 2px 0 8px;";
      view.colHead.append(view.colTitle, view.colCount);
      view.root.prepend(view.colHead);
      view.colTitle.textContent = `${data.label} · ${fmt(data.size)}`; // until the first draw
    }
  }
}

function groupSlider(view) {
  // the group's slider view, if it is on the page
  const g = view.data && view.data.group ? GROUPS.get(view.data.group) : null;
  if (!g) return null;
  for (const v of g) if (v !== view && v.data && v.data.role === "slider" && v.root.isConnected) return v;
  return null;
}

function groupLeadSize(view, data) {
  // a column shows the size its group's slider shows (a rerun may carry an older size while the user drags)
  if (data.role !== "column") return null;
  const s = groupSlider(view);
  return s && s.size !== null ? s.size : null;
}

function groupFollow(view, L) {
  // the slider moved to L: every column of its group redraws at L (clamped to its own range)
  if (!view.data || view.data.role !== "slider") return;
  const g = GROUPS.get(view.data.group);
  if (!g) return;
  for (const v of g) {
    if (v === view) continue;
    if (!v.root.isConnected) {
      g.delete(v);
      continue;
    }
    if (v.model && v.data && v.data.role === "column") v.setSize(Math.min(Math.max(L, v.model.lo), v.model.hi));
  }
}

function groupCounts(view, total) {
  // a column's title and count line, as the server-drawn columns' ("N tokens · B bytes/token")
  if (!view.colHead) return;
  const d = view.data;
  view.colTitle.textContent = `${d.label} · ${fmt(view.size)}`;
  const bpt = total ? (d.textBytes / total).toFixed(2) : "0.00";
  view.colCount.textContent = `${fmt(total)} tokens · ${bpt} bytes/token`;
  view.colHead.dataset.total = String(total);
  view.colHead.dataset.size = String(view.size);
}
