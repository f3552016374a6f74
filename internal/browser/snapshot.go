package browser

import (
	"context"
	"errors"
	"strconv"

	"github.com/chromedp/chromedp"
)

// SnapshotFormat is the version of Snapshot's text (docs/browser.md).
const SnapshotFormat = 1

// RefAttr is the attribute Snapshot sets on each element it numbers.
const RefAttr = "data-wa-ref"

// Ref returns the CSS selector of the element numbered n by the last
// Snapshot: `[data-wa-ref="n"]`. Every selector-based method accepts it.
func Ref(n int) string { return `[` + RefAttr + `="` + strconv.Itoa(n) + `"]` }

// Snapshot returns the page as compact text in snapshot format 1
// (docs/browser.md): the URL and title, then the visible text and one line
// `[N] role "name" ...` per link, button, form control and image, in
// document order. It numbers those elements from 1 (attribute data-wa-ref,
// see Ref), removing the marks of an earlier snapshot.
func (b *Browser) Snapshot(ctx context.Context) (string, error) {
	var s string
	err := b.run(ctx, "snapshot", func(tctx context.Context) (err error) {
		s, err = chromedp.Run(tctx, chromedp.Evaluate[string](snapshotJS))
		if err == nil && s == "" {
			err = errors.New("the page is still loading")
		}
		return err
	})
	return s, err
}

// snapshotJS is snapshot format 1. internal/browser/fake computes the same
// text in Go from the HTML; a change here changes both (and the format's
// number).
const snapshotJS = `(() => {
if (document.readyState === "loading" || !document.body) return "";
const collapse = s => s.replace(/[ \t\n\r\f]+/g, " ").replace(/^ | $/g, "");
const q = s => '"' + s.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
const SKIP = new Set(["script", "style", "template", "noscript", "head", "title", "meta", "link", "base", "iframe", "object", "embed", "svg", "math", "canvas", "video", "audio", "datalist", "select", "option", "optgroup", "textarea"]);
const BLOCK = new Set(["address", "article", "aside", "blockquote", "caption", "dd", "details", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "legend", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"]);
const TYPES = new Set(["hidden", "text", "search", "tel", "url", "email", "password", "date", "month", "week", "time", "datetime-local", "number", "range", "color", "checkbox", "radio", "file", "submit", "image", "reset", "button"]);
const typeOf = el => { const t = (el.getAttribute("type") || "").trim().toLowerCase(); return TYPES.has(t) ? t : "text"; };
const hidden = el => el.hasAttribute("hidden") || (el.localName === "input" && typeOf(el) === "hidden") || (el.localName === "dialog" && !el.hasAttribute("open")) || getComputedStyle(el).display === "none";
const role = el => {
  switch (el.localName) {
  case "a": return el.hasAttribute("href") ? "link" : "";
  case "button": return "button";
  case "img": return "img";
  case "textarea": return "textbox";
  case "select": return el.multiple ? "listbox" : "combobox";
  case "input":
    switch (typeOf(el)) {
    case "submit": case "image": case "reset": case "button": return "button";
    case "checkbox": return "checkbox";
    case "radio": return "radio";
    case "search": return "searchbox";
    case "number": return "spinbutton";
    case "range": return "slider";
    case "file": return "file";
    }
    return "textbox";
  }
  return "";
};
const textOf = node => {
  let s = "";
  for (const c of node.childNodes) {
    if (c.nodeType === 3) s += c.data;
    else if (c.nodeType === 1) {
      if (SKIP.has(c.localName) || c.localName === "input" || hidden(c)) continue;
      if (c.localName === "img") s += " " + (c.getAttribute("alt") || "") + " ";
      else s += textOf(c);
    }
  }
  return s;
};
const labels = el => {
  const out = [];
  const id = el.getAttribute("id");
  if (id) for (const l of document.querySelectorAll("label")) if (l.getAttribute("for") === id) out.push(textOf(l));
  for (let p = el.parentElement; p; p = p.parentElement) if (p.localName === "label") { if (!p.hasAttribute("for")) out.push(textOf(p)); break; }
  return collapse(out.join(" "));
};
const nameOf = (el, r) => {
  let n = collapse(el.getAttribute("aria-label") || "");
  if (n) return n;
  const by = collapse(el.getAttribute("aria-labelledby") || "");
  if (by) {
    n = collapse(by.split(" ").map(id => { const e = document.getElementById(id); return e ? textOf(e) : ""; }).join(" "));
    if (n) return n;
  }
  const tag = el.localName;
  if (tag === "input" && r === "button") {
    const t = typeOf(el);
    if (t === "image") n = collapse(el.getAttribute("alt") || "") || "Submit";
    else if (el.hasAttribute("value")) n = collapse(el.getAttribute("value"));
    else n = t === "submit" ? "Submit" : t === "reset" ? "Reset" : "";
  } else if (tag === "input" || tag === "select" || tag === "textarea") n = labels(el);
  else if (tag === "img") n = collapse(el.getAttribute("alt") || "");
  else n = collapse(textOf(el));
  return n || collapse(el.getAttribute("title") || "");
};
const optionLabel = o => collapse(o.getAttribute("label") || "") || collapse(o.textContent);
const hrefOf = a => {
  try {
    const u = new URL(a.getAttribute("href").trim(), document.baseURI);
    return u.origin === location.origin ? u.pathname + u.search + u.hash : u.href;
  } catch (e) { return a.getAttribute("href"); }
};
for (const el of document.querySelectorAll("[data-wa-ref]")) el.removeAttribute("data-wa-ref");
const lines = ["URL: " + location.href, "Title: " + collapse(document.title)];
let buf = "", n = 0;
const flush = () => { const s = collapse(buf); if (s) lines.push(s); buf = ""; };
const emit = (el, r) => {
  n++;
  el.setAttribute("data-wa-ref", String(n));
  let line = "[" + n + "] " + r + " " + q(nameOf(el, r));
  switch (r) {
  case "link": line += " href=" + q(hrefOf(el)); break;
  case "textbox": case "searchbox": case "spinbutton": case "slider":
    if (el.localName === "input" && typeOf(el) === "password") { line += " password"; if (el.value) line += " filled"; }
    else if (el.value) line += " value=" + q(collapse(el.value));
    if (collapse(el.getAttribute("placeholder") || "")) line += " placeholder=" + q(collapse(el.getAttribute("placeholder")));
    break;
  case "checkbox": case "radio": if (el.checked) line += " checked"; break;
  case "combobox": case "listbox": {
    const opts = Array.from(el.options);
    const sel = opts.filter(o => o.selected).map(o => q(optionLabel(o)));
    line += " selected=" + (sel.length ? sel.join(",") : '""') + " options: " + opts.map(o => q(optionLabel(o))).join(", ");
    break;
  }
  }
  if (el.hasAttribute("disabled")) line += " disabled";
  lines.push(line);
};
const images = el => {
  for (const c of el.children) {
    if (SKIP.has(c.localName) || hidden(c)) continue;
    if (c.localName === "img") emit(c, "img"); else images(c);
  }
};
const walk = node => {
  for (const c of node.childNodes) {
    if (c.nodeType === 3) { buf += c.data; continue; }
    if (c.nodeType !== 1) continue;
    const tag = c.localName;
    const r = role(c);
    if (r && !hidden(c)) {
      flush();
      emit(c, r);
      if (r === "link" || r === "button") images(c);
      continue;
    }
    if (SKIP.has(tag) || hidden(c)) continue;
    if (tag === "br") { flush(); continue; }
    const block = BLOCK.has(tag);
    if (block) flush();
    walk(c);
    if (block) flush();
  }
};
walk(document.body);
flush();
return lines.join("\n") + "\n";
})()`
