#!/usr/bin/env bash
# Draws a tt-train run's learning curve as one self-contained SVG: training loss (left axis) and
# validation BLEU (right axis) against minutes of training, read from the run's log.jsonl.
# usage: scripts/learning_curve.sh RUN/log.jsonl > curve.svg      (needs only awk)
set -euo pipefail
log=${1:?usage: learning_curve.sh RUN/log.jsonl > curve.svg}
[[ -r $log ]] || { echo "learning_curve.sh: cannot read $log" >&2; exit 1; }
awk '
function num(key,   m) {  # the number after "key": in the current line, or "" if absent
  if (match($0, "\"" key "\":-?[0-9.eE+-]+")) { m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); return m + 0 }
  return ""
}
/"type":"train"/ { t = num("elapsed_s"); l = num("loss"); s = num("step")
  if (t != "" && l != "") { n++; tx[n] = t / 60; ty[n] = l; ts[n] = s } }
/"type":"valid"/ { b = num("bleu"); s = num("step"); t = num("elapsed_s")
  if (b != "") { m++; vb[m] = b; vs[m] = s; vt[m] = (t != "" ? t / 60 : -1) } }
END {
  if (n == 0) { print "learning_curve.sh: no train records in the log" > "/dev/stderr"; exit 1 }
  for (i = 1; i <= m; i++) if (vt[i] < 0) {       # no time on the record: the last train record at or before its step
    vt[i] = 0; for (j = 1; j <= n; j++) if (ts[j] <= vs[i]) vt[i] = tx[j] }
  xmax = tx[n]; for (i = 1; i <= m; i++) if (vt[i] > xmax) xmax = vt[i]
  if (xmax <= 0) xmax = 1
  lmax = 0; for (i = 1; i <= n; i++) if (ty[i] > lmax) lmax = ty[i]
  bmax = 10; for (i = 1; i <= m; i++) if (vb[i] > bmax) bmax = vb[i]
  lmax = int(lmax) + 1; bmax = (int(bmax / 10) + 1) * 10
  W = 720; H = 400; L = 60; R = 60; T = 40; B = 50; pw = W - L - R; ph = H - T - B
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
  printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
  printf "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">tt-train: training loss and validation BLEU</text>\n", W / 2
  for (k = 0; k <= 5; k++) {                       # grid and axis labels
    y = T + ph - k * ph / 5
    printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + pw, y
    printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#1f77b4\">%.1f</text>\n", L - 6, y + 4, k * lmax / 5
    printf "<text x=\"%d\" y=\"%.1f\" fill=\"#d62728\">%.0f</text>\n", L + pw + 6, y + 4, k * bmax / 5
    x = L + k * pw / 5
    printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.1f</text>\n", x, T + ph + 18, k * xmax / 5
  }
  printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n", L, T, pw, ph
  printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">minutes of training</text>\n", L + pw / 2, H - 10
  printf "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\" fill=\"#1f77b4\">training loss (label-smoothed, per token)</text>\n", T + ph / 2
  printf "<text transform=\"translate(%d,%d) rotate(90)\" text-anchor=\"middle\" fill=\"#d62728\">validation BLEU (greedy)</text>\n", W - 14, T + ph / 2
  printf "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\""
  for (i = 1; i <= n; i++) printf "%.1f,%.1f ", L + tx[i] / xmax * pw, T + ph - ty[i] / lmax * ph
  printf "\"/>\n"
  if (m > 0) {
    printf "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\""
    for (i = 1; i <= m; i++) printf "%.1f,%.1f ", L + vt[i] / xmax * pw, T + ph - vb[i] / bmax * ph
    printf "\"/>\n"
    for (i = 1; i <= m; i++)
      printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d62728\"><title>step %d: BLEU %.2f</title></circle>\n", L + vt[i] / xmax * pw, T + ph - vb[i] / bmax * ph, vs[i], vb[i]
  }
  print "</svg>"
}' "$log"
