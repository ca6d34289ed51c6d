"""The HTML report's style sheet (shared with the online signals page)."""

CSS = """
:root { --fail: #b42318; --pass: #067647; --muted: #667085; --line: #eaecf0; --mark: #fde68a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, Segoe UI, sans-serif; margin: 0 auto; max-width: 1100px;
       padding: 24px; color: #101828; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); font-weight: 600; } .fail, .error, .worse { color: var(--fail); font-weight: 600; }
.fixed { color: var(--pass); }
.lower { color: var(--muted); }
.filters { display: flex; gap: 16px; align-items: center; flex-wrap: wrap; margin: 8px 0;
           padding: 8px; background: #f9fafb; border: 1px solid var(--line); border-radius: 6px; }
details.case { border-bottom: 1px solid var(--line); }
details.case > summary { display: grid; grid-template-columns: 220px 90px 70px 1fr; gap: 8px;
                         padding: 6px 4px; cursor: pointer; list-style: none; }
details.case > summary::-webkit-details-marker { display: none; }
details.case[open] > summary { background: #f2f4f7; }
.detail { padding: 8px 12px 16px; }
.chunk { border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; margin: 6px 0; }
.chunk .meta { color: var(--muted); font-size: 12px; }
.chunk.relevant { border-color: #12b76a; }
pre { white-space: pre-wrap; word-break: break-word; background: #f9fafb; padding: 8px;
      border-radius: 6px; border: 1px solid var(--line); margin: 4px 0; font-size: 13px; }
mark.fact { background: var(--mark); padding: 0 1px; }
ul.claims li.unsupported { color: var(--fail); }
.charts { display: flex; gap: 24px; flex-wrap: wrap; }
.chart { border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
.chart svg text { font-size: 10px; fill: var(--muted); }
.chart svg text.count { font-size: 12px; font-weight: 600; fill: currentColor; }
.chart ul.chart-notes { margin: 4px 0 0; padding-left: 16px; font-size: 12px; }
.legend { font-size: 12px; } .legend svg { vertical-align: middle; }
:root { color-scheme: light dark; }
@media (prefers-color-scheme: dark) {
  :root { --fail: #f97066; --pass: #47cd89; --muted: #98a2b3; --line: #344054; --mark: #93370d; }
  body { background: #0c111d; color: #f5f5f6; }
  .filters, pre, details.case[open] > summary { background: #161b26; }
}
section.conversation { border-left: 3px solid var(--line); padding-left: 8px; margin: 10px 0; }
section.conversation > h3 { font-size: 14px; margin: 6px 0; }
"""
