#include "viz/attention_html.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace tt::viz {

namespace {

const char* page_head = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%TITLE%</title>
<style>
body{font:13px system-ui,sans-serif;margin:12px;color:#222}
header{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin-bottom:8px}
#toks{margin:6px 0;line-height:1.9}
#toks span{padding:1px 3px;margin:1px;border-radius:3px;border:1px solid #ddd;cursor:default}
#toks span.q:hover,#toks span.on{border-color:#d33}
#info{color:#555;min-height:1.2em;font-family:monospace}
table{border-collapse:collapse}
th{font-weight:normal;color:#555;padding:2px 6px}
td{vertical-align:top;padding:3px}
.map{display:grid;gap:0;--s:9px}
.map div{width:var(--s);height:var(--s)}
.map .cl{height:auto;writing-mode:vertical-rl;transform:rotate(180deg);font-size:7px;overflow:hidden;max-height:48px;white-space:nowrap}
.map .rl{width:auto;font-size:7px;text-align:right;padding-right:2px;white-space:nowrap;overflow:hidden;max-width:48px;line-height:var(--s)}
.map .c{cursor:crosshair}
</style></head>
<body>
<header><b>tt-attnviz</b>
<label>sentence <select id="sent"></select></label><button id="prev">&lt;</button><button id="next">&gt;</button>
<label>kind <select id="kind"></select></label></header>
<div id="text"></div><div id="toks"></div><div id="info"></div><div id="grid"></div>
<style id="hl"></style>
<script>
"use strict";
let nerr=0;
window.addEventListener("error",e=>{nerr++;document.body.dataset.errors=nerr;});
</script>
)HTML";

const char* page_tail = R"HTML(<script>
"use strict";
(function(){
const $=id=>document.getElementById(id);
const S=[...document.querySelectorAll("script.attn")].map(e=>JSON.parse(e.textContent));
const names={encoder_self:"encoder self-attention",decoder_self:"decoder self-attention",cross:"cross-attention"};
const shade=[];for(let v=0;v<256;v++)shade.push("background:rgba(20,70,170,"+(v/255).toFixed(3)+")");
let cur=0,kind=null,view=null;
const esc=t=>String(t).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c]);
function bytes(b){const s=atob(b),a=new Uint8Array(s.length);for(let i=0;i<s.length;i++)a[i]=s.charCodeAt(i);return a;}
S.forEach((s,i)=>{const o=document.createElement("option");o.value=i;o.textContent=s.id+": "+s.translation.slice(0,60);$("sent").appendChild(o);});
function render(){
  const s=S[cur];if(!s){$("grid").textContent="no sentences";document.body.dataset.rendered=0;return;}
  const kinds=Object.keys(s.kinds);
  if(!kinds.includes(kind))kind=kinds.includes("cross")?"cross":kinds[0];
  $("kind").innerHTML=kinds.map(k=>'<option value="'+k+'"'+(k===kind?" selected":"")+">"+names[k]+"</option>").join("");
  $("sent").value=cur;
  $("text").textContent=s.translation;
  const m=s.kinds[kind];if(!m){$("grid").textContent="no attention kept";document.body.dataset.rendered=0;return;}
  const q=m.q8||(m.q8=bytes(m.q));
  const rl=kind==="encoder_self"?s.src:s.tgt,cl=kind==="decoder_self"?s.tgt:s.src;
  view={m,q,rl,cl};
  $("toks").innerHTML="queries: "+rl.map((t,i)=>'<span class="q" data-r="'+i+'">'+esc(t)+"</span>").join("")+
    "<br>keys: "+cl.map((t,i)=>'<span class="k" data-c="'+i+'">'+esc(t)+"</span>").join("");
  const heads=m.heads===s.heads.length?s.heads.map(h=>"head "+h):[s.reduce+" of heads "+s.heads.join(",")];
  const size=m.rows*m.cols,h=[];
  h.push("<table><tr><th></th>"+heads.map(x=>"<th>"+esc(x)+"</th>").join("")+"</tr>");
  let cells=0;
  m.layers.forEach((layer,li)=>{
    h.push("<tr><th>layer "+layer+"</th>");
    for(let hd=0;hd<m.heads;hd++){
      const base=(li*m.heads+hd)*size,mi=li*m.heads+hd;
      h.push('<td><div class="map" data-m="'+mi+'" style="grid-template-columns:auto repeat('+m.cols+',var(--s))"><div></div>');
      for(let c=0;c<m.cols;c++)h.push('<div class="cl" data-c="'+c+'">'+esc(cl[c])+"</div>");
      for(let r=0;r<m.rows;r++){
        h.push('<div class="rl" data-r="'+r+'">'+esc(rl[r])+"</div>");
        for(let c=0;c<m.cols;c++)h.push('<div class="c" data-r="'+r+'" data-c="'+c+'" style="'+shade[q[base+r*m.cols+c]]+'"></div>');
        cells+=m.cols;
      }
      h.push("</div></td>");
    }
    h.push("</tr>");
  });
  h.push("</table>");
  $("grid").innerHTML=h.join("");
  $("hl").textContent="";$("info").textContent="";
  document.body.dataset.rendered=cells;
}
// Highlight query row r in every map; shade the key tokens by row r of map mi (all maps' mean if mi < 0).
function focus(r,mi,c){
  if(!view)return;
  const {m,q,rl,cl}=view,size=m.rows*m.cols,n=m.layers.length*m.heads;
  $("hl").textContent='.map .c[data-r="'+r+'"]{box-shadow:inset 0 0 0 1px #d33}.map .rl[data-r="'+r+'"],#toks span.q[data-r="'+r+'"]{color:#d33;font-weight:bold}';
  document.querySelectorAll("#toks span.k").forEach(e=>{
    const k=+e.dataset.c;let w=0;
    if(mi>=0)w=q[mi*size+r*m.cols+k];else{for(let i=0;i<n;i++)w+=q[i*size+r*m.cols+k];w/=n;}
    e.style.background="rgba(20,70,170,"+(w/255).toFixed(3)+")";e.style.color=w>140?"#fff":"";
  });
  if(mi>=0&&c>=0){const li=Math.floor(mi/m.heads),hd=mi%m.heads;
    $("info").textContent="layer "+m.layers[li]+", "+(m.heads>1?"head "+S[cur].heads[hd]:"heads reduced")+": "+rl[r]+" \u2192 "+cl[c]+"  "+(q[mi*size+r*m.cols+c]/255).toFixed(3);}
  else $("info").textContent=rl[r]+" \u2192 mean over the maps shown";
}
$("grid").addEventListener("mouseover",e=>{const t=e.target;if(!t.classList.contains("c"))return;
  focus(+t.dataset.r,+t.parentNode.dataset.m,+t.dataset.c);});
$("toks").addEventListener("mouseover",e=>{const t=e.target;if(t.classList.contains("q"))focus(+t.dataset.r,-1,-1);});
$("kind").addEventListener("change",e=>{kind=e.target.value;render();});
$("sent").addEventListener("change",e=>{cur=+e.target.value;render();});
$("prev").addEventListener("click",()=>{if(cur>0){cur--;render();}});
$("next").addEventListener("click",()=>{if(cur+1<S.length){cur++;render();}});
render();
})();
</script>
</body></html>
)HTML";

}  // namespace

std::string base64(const unsigned char* data, size_t size) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    const unsigned n = (unsigned{data[i]} << 16) | (i + 1 < size ? unsigned{data[i + 1]} << 8 : 0u) |
                       (i + 2 < size ? unsigned{data[i + 2]} : 0u);
    out += abc[(n >> 18) & 63];
    out += abc[(n >> 12) & 63];
    out += i + 1 < size ? abc[(n >> 6) & 63] : '=';
    out += i + 2 < size ? abc[n & 63] : '=';
  }
  return out;
}

HtmlWriter::HtmlWriter(const std::string& path, const std::string& title) : file_(path, true) {
  std::string head = page_head;
  std::string safe;
  for (char ch : title) safe += ch == '<' ? std::string("&lt;") : ch == '&' ? std::string("&amp;") : std::string(1, ch);
  head.replace(head.find("%TITLE%"), 7, safe);
  file_.stream() << head;
}

void HtmlWriter::add(const AttentionView& v, const SentenceInfo& info) {
  nlohmann::json s;
  s["id"] = info.id;
  s["translation"] = info.translation;
  s["src"] = v.src_tokens;
  s["tgt"] = v.tgt_tokens;
  s["heads"] = v.heads;
  s["reduce"] = reduce_name(v.reduce);
  s["kinds"] = nlohmann::json::object();
  std::vector<unsigned char> q;
  for (const MapSet& m : v.maps) {
    q.resize(m.data.size());
    for (size_t i = 0; i < q.size(); ++i)
      q[i] = static_cast<unsigned char>(std::lround(std::clamp(m.data[i], 0.0f, 1.0f) * 255.0f));
    s["kinds"][kind_name(m.kind)] = {{"layers", m.layers}, {"heads", m.heads}, {"rows", m.rows}, {"cols", m.cols},
                                     {"q", base64(q.data(), q.size())}};
  }
  // '<' escaped as \u003c, so no token can end the script element or open a comment in it.
  std::string text = s.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), safe;
  safe.reserve(text.size());
  for (char ch : text) safe += ch == '<' ? std::string("\\u003c") : std::string(1, ch);
  file_.stream() << "<script type=\"application/json\" class=\"attn\">" << safe << "</script>\n";
  ++sentences_;
}

void HtmlWriter::finish() {
  file_.stream() << page_tail;
  file_.commit();
}

}  // namespace tt::viz
