package k6script

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// undef stands for undefined in a tagCase's want.
const undef = "<undefined>"

// tagCase is one expression over a document, with $(id) its Element of
// that id, and its value worked out by hand from the markup and k6
// v1.8.1's rules (js/modules/k6/html/elements.go, elements_gen.go).
type tagCase struct {
	expr string
	want any // compared as JSON; undef for undefined
}

// tagScript is a script of head (its imports) and a default function that
// runs setup (which sets doc, a Selection), checks every case against
// doc's Elements and throws one error listing every mismatch.
func tagScript(head, setup string, cases []tagCase) string {
	quote := jsString
	var b strings.Builder
	b.WriteString(head + "\nexport default function () {\n  " + setup + "\n")
	b.WriteString("  const $ = (id) => doc.find('#' + id).get(0);\n  const bad = [];\n")
	b.WriteString("  const check = (expr, f, want) => {\n    let got;\n    try { got = f(); } catch (e) { got = 'threw ' + e; }\n")
	b.WriteString("    const g = got === undefined ? " + quote(quote(undef)) + " : JSON.stringify(got);\n")
	b.WriteString("    if (g !== want) bad.push(expr + ': got ' + g + ', want ' + want);\n  };\n")
	for _, c := range cases {
		b.WriteString("  check(" + quote(c.expr) + ", () => " + c.expr + ", " + quote(jsonText(c.want)) + ");\n")
	}
	b.WriteString("  if (bad.length) throw new Error(bad.length + ' mismatches:\\n' + bad.join('\\n'));\n}\n")
	return b.String()
}

// tagDoc has an element of each tag k6 gives methods to, with and without
// the attributes those methods read, and some a method must not accept
// (an enumerated attribute out of its values, an integer that is not one).
const tagDoc = `<html><head><title>The title</title>
<base id="base1" href="/other/" target="_top">
<link id="link1" rel="stylesheet alternate" href="style.css" hreflang="de" media="print" crossorigin="use-credentials" referrerpolicy="origin"><link id="link2">
<meta id="meta1" http-equiv="refresh" content="5"><meta id="meta2" name="author" http-equiv="Refresh">
<style id="style1"></style><style id="style2" type="text/less" media="screen"></style>
<script id="script1" src="app.js" async>var x;</script></head>
<body>
<a id="a1" href="https://user:pw@example.com:8443/p/q.html?x=1&y=2#frag" rel="next nofollow" target="_blank" download="f.txt" referrerpolicy="unsafe-url" hreflang="fr" type="text/html" accesskey="k">Link <b>one</b></a>
<a id="a2">no href</a>
<a id="a3" href="http://example.com:80/">default port</a>
<a id="a4" href="rel/page?q">relative</a>
<a id="a5" href="https://example.com:443">https default</a>
<a id="a6" href="file:///tmp/x.txt">file</a>
<a id="a7" href="ftp://[::1]:21/f" referrerpolicy="bogus">ftp</a>
<area id="area1" href="http://h.example/area" rel="x">
<form id="f1" action="/submit" method="POST" enctype="multipart/form-data" target="_self" name="login" accept-charset="utf-8" autocomplete="off" novalidate>
 <label id="l1" for="u">User</label>
 <input id="u" name="user" value="ada" maxlength="8" size="20" required placeholder="name" list="dl1">
 <label id="l2">Remember <input id="cb" type="checkbox" name="keep" checked></label>
 <input id="bad" type="Email" tabindex="x" maxlength="-">
 <fieldset id="fs1" name="grp" disabled><legend id="lg1" accesskey="g">Group</legend><input id="r1" type="radio" name="r" value="a"><textarea id="ta1" name="msg" rows="4" value="héllo" wrap="hard">inner text</textarea></fieldset>
 <select id="s1" name="choice"><option id="o1" value="1">One</option><optgroup id="og1" label="G" disabled><option id="o2" selected>Two &amp; more</option></optgroup><option id="o3" label="Three!" value="3" selected>Three</option></select>
 <button id="b1" formaction="alt" formmethod="PoSt" formenctype="text/plain" formtarget="_blank" formnovalidate>Go <i>now</i></button>
 <button id="b2" type="reset" value="r" tabindex="3">Reset</button>
</form>
<datalist id="dl1"><option id="dlo1" value="x"><option id="dlo2" value="y"></datalist>
<form id="f2"></form>
<input id="outside" form="f2" type="hidden" list="dl1">
<select id="s2" multiple form="f2"><option id="o4">A</option><option id="o5">B</option></select>
<textarea id="ta2"></textarea>
<keygen id="kg1" keytype="EC" name="k">
<table id="t1" sortable><caption id="cap">Cap</caption>
<thead id="thd"><tr id="r0"><th id="h1" abbr="N" scope="col" colspan="2">Name</th><th id="h2" scope="diagonal">X</th></tr></thead>
<tbody id="tb1"><tr id="rw1"><td id="c1" rowspan="2" headers="h1">a</td><td id="c2" colspan="zz">b</td></tr><tr id="rw2"><td id="c3">c</td></tr></tbody>
<tfoot id="tf1"><tr id="rw3"><td id="c4">f</td></tr></tfoot>
</table>
<table id="t2"><tr id="rw4"><td id="c5">x</td></tr></table>
<table id="t3"><colgroup><col id="col1" span="3"><col id="col2" span="0"><col id="col3"></colgroup></table>
<img id="img1" src="pics/a.png" width="640" height="x" alt="A" ismap usemap="#m1" crossorigin="bogus"><img id="img2">
<map id="m1" name="mm"><area id="ar1" href="/one"><area id="ar2" href="two"></map>
<object id="obj1" usemap="#m1" data="d.bin" form="f2"></object>
<map name="m2"></map>
<canvas id="cv1" width="300"></canvas>
<ol id="ol1" reversed start="3" type="i"><li id="li1" value="7" type="square">x</li><li id="li2" value="z">y</li></ol>
<ul id="ul1" type="disc"></ul>
<progress id="pg1" max="200" value="50"></progress><progress id="pg2" value="0.25"></progress><progress id="pg3"></progress><progress id="pg4" max="-4" value="3"></progress>
<meter id="mt1" min="1" max="10" low="2" high="8" optimum="x"></meter>
<output id="out1" for="u cb" name="res" form="f2">42</output>
<video id="v1" controls muted preload="metadata" src="movie.mp4"><source id="src1" src="s.webm" type="video/webm"><track id="tk1" kind="captions" src="c.vtt" srclang="en" label="English" default><track id="tk2" kind="bogus"></video>
<audio id="au1" crossorigin="anonymous" preload="bogus"></audio>
<iframe id="if1" src="frame.html" allowfullscreen width="10"></iframe>
<del id="del1" cite="why.html" datetime="2020-01-01">gone</del><ins id="ins1">new</ins>
<time id="tm1" datetime="2021-02-03">then</time><data id="d1" value="42">forty-two</data>
<embed id="em1" src="e.swf" type="x/y" width="5"><param id="pm1" name="a" value="b">
<pre id="pre1" name="n" value="v"></pre><quote id="q1" cite="c.html"></quote>
<span id="sp1">plain</span><p id="pa">a</p>
</body></html>`

// k6/html's tag-specific methods on a parseHTML document, which has no URL:
// URL attributes come back as written (an href's parts are those of the
// href resolved against nothing: rel/page is the path /rel/page).
func TestHTMLTagMethods(t *testing.T) {
	cases := []tagCase{
		// a, area: string, enumerated and URL attributes, the href's parts
		{"$('a1').href()", "https://user:pw@example.com:8443/p/q.html?x=1&y=2#frag"},
		{"$('a1').toString()", "https://user:pw@example.com:8443/p/q.html?x=1&y=2#frag"},
		{"$('a1').hash()", "#frag"},
		{"$('a1').host()", "example.com:8443"},
		{"$('a1').hostname()", "example.com"},
		{"$('a1').port()", "8443"},
		{"$('a1').username()", "user"},
		{"$('a1').password()", "pw"},
		{"$('a1').origin()", "https://example.com:8443"},
		{"$('a1').pathname()", "/p/q.html"},
		{"$('a1').protocol()", "https"},
		{"$('a1').search()", "?x=1&y=2"},
		{"$('a1').relList().join('|')", "next|nofollow"},
		{"$('a1').rel()", "next nofollow"},
		{"$('a1').text()", "Link one"},
		{"$('a1').download()", "f.txt"},
		{"$('a1').referrerPolicy()", "unsafe-url"},
		{"$('a1').hrefLang()", "fr"},
		{"$('a1').type()", "text/html"},
		{"$('a1').accessKey()", "k"},
		{"$('a1').target()", "_blank"},
		{"$('a2').href()", ""},
		{"$('a2').hash()", ""},
		{"$('a2').host()", ""},
		{"$('a2').port()", ""},
		{"$('a2').origin()", ""},
		{"$('a2').pathname()", ""},
		{"$('a2').protocol()", ":"},
		{"$('a2').username()", ""},
		{"$('a2').relList().length", 0},
		{"$('a2').referrerPolicy()", ""},
		{"$('a3').host()", "example.com"}, // :80 is http's default
		{"$('a3').port()", "80"},
		{"$('a3').origin()", "http://example.com:80"},
		{"$('a4').href()", "rel/page?q"},
		{"$('a4').pathname()", "/rel/page"},
		{"$('a4').search()", "?q"},
		{"$('a4').host()", ""},
		{"$('a5').host()", "example.com"},
		{"$('a5').port()", "443"},
		{"$('a6').origin()", "file:///tmp/x.txt"},
		{"$('a6').protocol()", "file"},
		{"$('a7').host()", "::1"}, // :21 is ftp's default
		{"$('a7').hostname()", "::1"},
		{"$('a7').referrerPolicy()", ""},
		{"$('area1').hostname()", "h.example"},
		{"$('area1').relList().join('|')", "x"},
		// head: base, link, meta, style, script, title
		{"$('base1').href()", "/other/"},
		{"$('base1').target()", "_top"},
		{"$('link1').href()", "style.css"},
		{"$('link1').relList().join('|')", "stylesheet|alternate"},
		{"$('link1').hreflang()", "de"},
		{"$('link1').media()", "print"},
		{"$('link1').crossOrigin()", "use-credentials"},
		{"$('link1').referrerPolicy()", "origin"},
		{"$('link2').crossOrigin()", undef},
		{"$('link2').relList().length", 0},
		{"$('link2').href()", ""},
		{"$('meta1').httpEquiv()", "refresh"},
		{"$('meta1').content()", "5"},
		{"$('meta1').name()", ""},
		{"$('meta2').httpEquiv()", "content-type"}, // Refresh is not refresh
		{"$('meta2').name()", "author"},
		{"$('style1').type()", "text/css"},
		{"$('style2').type()", "text/less"},
		{"$('style2').media()", "screen"},
		{"$('script1').src()", "app.js"},
		{"$('script1').async()", true},
		{"$('script1').defer()", false},
		{"$('script1').text()", "var x;"},
		{"doc.find('title').get(0).text()", "The title"},
		// form
		{"$('f1').action()", "/submit"},
		{"$('f1').method()", "get"}, // only "post" exactly reads as post
		{"$('f1').enctype()", "multipart/form-data"},
		{"$('f1').encoding()", "multipart/form-data"},
		{"$('f1').target()", "_self"},
		{"$('f1').name()", "login"},
		{"$('f1').acceptCharset()", "utf-8"},
		{"$('f1').autocomplete()", "off"},
		{"$('f1').noValidate()", true},
		{"$('f1').elements().map((e) => e.id()).join()", "u,cb,bad,fs1,r1,ta1,s1,b1,b2"},
		{"$('f1').length()", 9},
		{"$('f2').elements().length", 0},
		{"$('f2').method()", "get"},
		{"$('f2').enctype()", "application/x-www-form-urlencoded"},
		{"$('f2').autocomplete()", "on"},
		{"$('f2').noValidate()", false},
		// input
		{"$('u').name()", "user"},
		{"$('u').value()", "ada"},
		{"$('u').defaultValue()", "ada"},
		{"$('u').maxLength()", 8},
		{"$('u').size()", 20},
		{"$('u').required()", true},
		{"$('u').readonly()", false},
		{"$('u').placeholder()", "name"},
		{"$('u').type()", "text"},
		{"$('u').tabIndex()", 0},
		{"$('u').checked()", false},
		{"$('u').autocomplete()", "on"},
		{"$('u').src()", ""},
		{"$('u').form().id()", "f1"},
		{"$('u').formAction()", "/submit"},
		{"$('u').formMethod()", "post"}, // the form's POST, lower-cased
		{"$('u').formEnctype()", "multipart/form-data"},
		{"$('u').formNoValidate()", true},
		{"$('u').formTarget()", "_self"},
		{"$('u').labels().map((e) => e.id()).join()", "l1"},
		{"$('u').list().id()", "dl1"},
		{"$('cb').type()", "checkbox"},
		{"$('cb').checked()", true},
		{"$('cb').defaultChecked()", true},
		{"$('cb').value()", ""},
		{"$('cb').labels().map((e) => e.id()).join()", "l2"},
		{"$('cb').list()", undef},
		{"$('bad').type()", "text"},
		{"$('bad').tabIndex()", 0},
		{"$('bad').maxLength()", -1},
		{"$('r1').type()", "radio"},
		{"$('r1').value()", "a"},
		{"$('outside').form().id()", "f2"},
		{"$('outside').type()", "hidden"},
		{"$('outside').list()", undef},
		{"$('outside').formAction()", ""},
		{"$('outside').formMethod()", "get"},
		{"$('outside').formEnctype()", "application/x-www-form-urlencoded"},
		{"$('outside').formNoValidate()", false},
		// fieldset, legend, label, keygen
		{"$('fs1').name()", "grp"},
		{"$('fs1').disabled()", true},
		{"$('fs1').type()", "fieldset"},
		{"$('fs1').form().id()", "f1"},
		{"$('fs1').elements().map((e) => e.id()).join()", "r1,ta1"},
		{"$('fs1').validity()", undef},
		{"$('lg1').accessKey()", "g"},
		{"$('lg1').form().id()", "f1"},
		{"$('l1').htmlFor()", "u"},
		{"$('l1').control().id()", "u"},
		{"$('l1').form().id()", "f1"},
		{"$('l2').control()", undef},
		{"$('l2').htmlFor()", ""},
		{"$('kg1').keytype()", "EC"},
		{"$('kg1').type()", "keygen"},
		{"$('kg1').name()", "k"},
		{"$('kg1').form()", undef},
		// textarea: value() is the value attribute, not the text inside
		{"$('ta1').value()", "héllo"},
		{"$('ta1').defaultValue()", "héllo"},
		{"$('ta1').length()", 6}, // bytes: é is two
		{"$('ta1').rows()", 4},
		{"$('ta1').cols()", 0},
		{"$('ta1').maxLength()", 0},
		{"$('ta1').wrap()", "hard"},
		{"$('ta1').autocapitalize()", "sentences"},
		{"$('ta1').type()", "textarea"},
		{"$('ta1').readOnly()", false},
		{"$('ta1').form().id()", "f1"},
		{"$('ta1').labels().length", 0},
		{"$('ta1').textContent()", "inner text"},
		{"$('ta2').value()", ""},
		{"$('ta2').length()", 0},
		{"$('ta2').wrap()", "soft"},
		{"$('ta2').form()", undef},
		// select, option, optgroup, datalist
		{"$('s1').name()", "choice"},
		{"$('s1').options().map((e) => e.id()).join()", "o1,o2,o3"},
		{"$('s1').length()", 3},
		{"$('s1').selectedIndex()", 1}, // the first selected
		{"$('s1').selectedOptions().map((e) => e.id()).join()", "o2,o3"},
		{"$('s1').value()", "Two &amp; more"}, // no value: its inner HTML
		{"$('s1').type()", "select"},
		{"$('s1').size()", 1},
		{"$('s1').multiple()", false},
		{"$('s1').form().id()", "f1"},
		{"$('s1').labels().length", 0},
		{"$('s2').type()", "select-multiple"},
		{"$('s2').size()", 4},
		{"$('s2').multiple()", true},
		{"$('s2').selectedIndex()", -1},
		{"$('s2').value()", ""},
		{"$('s2').selectedOptions().length", 0},
		{"$('s2').form().id()", "f2"},
		{"$('o1').value()", "1"},
		{"$('o1').label()", "One"},
		{"$('o1').text()", "One"},
		{"$('o1').index()", 0},
		{"$('o1').selected()", false},
		{"$('o1').disabled()", false},
		{"$('o1').form().id()", "f1"},
		{"$('o2').disabled()", true}, // its optgroup is
		{"$('o2').selected()", true},
		{"$('o2').defaultSelected()", true},
		{"$('o2').label()", "Two & more"},
		{"$('o2').value()", "Two &amp; more"},
		{"$('o2').index()", 1},
		{"$('o3').label()", "Three!"},
		{"$('o3').value()", "3"},
		{"$('o3').index()", 2},
		{"$('o3').disabled()", false},
		{"$('o4').form().id()", "f2"}, // through its select's form attribute
		{"$('o5').index()", 1},
		{"$('og1').label()", "G"},
		{"$('og1').disabled()", true},
		{"$('dl1').options().map((e) => e.id()).join()", "dlo1,dlo2"},
		{"$('dlo2').index()", 1},
		{"$('dlo1').form()", undef},
		{"$('dlo1').value()", "x"},
		// button
		{"$('b1').type()", "submit"},
		{"$('b1').formAction()", "alt"},
		{"$('b1').formMethod()", "post"},
		{"$('b1').formEnctype()", "text/plain"},
		{"$('b1').formTarget()", "_blank"},
		{"$('b1').formNoValidate()", true},
		{"$('b1').value()", "Go <i>now</i>"},
		{"$('b1').name()", ""},
		{"$('b1').form().id()", "f1"},
		{"$('b2').type()", "reset"},
		{"$('b2').value()", "r"},
		{"$('b2').tabIndex()", 3},
		{"$('b2').formAction()", "/submit"},
		{"$('b2').formEnctype()", "multipart/form-data"},
		// table family
		{"$('t1').caption().id()", "cap"},
		{"$('t1').tHead().id()", "thd"},
		{"$('t1').tFoot().id()", "tf1"},
		{"$('t1').rows().map((e) => e.id()).join()", "r0,rw1,rw2,rw3"},
		{"$('t1').tBodies().map((e) => e.id()).join()", "tb1"},
		{"$('t1').sortable()", true},
		{"$('t2').caption()", undef},
		{"$('t2').tHead()", undef},
		{"$('t2').tBodies().length", 1}, // the parser's implied tbody
		{"$('t2').rows().map((e) => e.id()).join()", "rw4"},
		{"$('t2').sortable()", false},
		{"$('thd').rows().map((e) => e.id()).join()", "r0"},
		{"$('tb1').rows().map((e) => e.id()).join()", "rw1,rw2"},
		{"$('tf1').rows().map((e) => e.id()).join()", "rw3"},
		{"$('r0').cells().map((e) => e.id()).join()", "h1,h2"},
		{"$('r0').rowIndex()", 0},
		{"$('rw2').rowIndex()", 2},
		{"$('rw2').sectionRowIndex()", 1},
		{"$('rw3').rowIndex()", 3},
		{"$('rw3').sectionRowIndex()", 0},
		{"$('rw4').sectionRowIndex()", 0},
		{"$('h1').abbr()", "N"},
		{"$('h1').scope()", "col"},
		{"$('h1').colSpan()", 2},
		{"$('h1').rowSpan()", 1},
		{"$('h1').sorted()", false},
		{"$('h2').scope()", ""},
		{"$('h2').cellIndex()", 1},
		{"$('c1').rowSpan()", 2},
		{"$('c1').headers()", "h1"},
		{"$('c1').cellIndex()", 0},
		{"$('c2').colSpan()", 1},
		{"$('c2').cellIndex()", 1},
		{"$('c3').cellIndex()", 0},
		{"$('col1').span()", 3},
		{"$('col2').span()", 1}, // under 1 reads as 1
		{"$('col3').span()", 1},
		// img, map, object
		{"$('img1').src()", "pics/a.png"},
		{"$('img1').currentSrc()", "pics/a.png"},
		{"$('img1').width()", 640},
		{"$('img1').height()", 0},
		{"$('img1').alt()", "A"},
		{"$('img1').isMap()", true},
		{"$('img1').useMap()", "#m1"},
		{"$('img1').crossOrigin()", undef},
		{"$('img1').referrerPolicy()", ""},
		{"$('img2').src()", ""},
		{"$('img2').width()", 0},
		{"$('img2').isMap()", false},
		{"$('m1').name()", "mm"},
		{"$('m1').areas().map((e) => e.id()).join()", "ar1,ar2"},
		{"$('m1').images().map((e) => e.id()).join()", "img1,obj1"},
		{"doc.find('map[name=m2]').get(0).images().length", 0}, // k6 finds a map by its id only
		{"$('obj1').data()", "d.bin"},
		{"$('obj1').form().id()", "f2"},
		{"$('obj1').useMap()", "#m1"},
		{"$('obj1').tabIndex()", 0},
		{"$('obj1').typeMustMatch()", false},
		// canvas, lists, progress, meter, output
		{"$('cv1').width()", 300},
		{"$('cv1').height()", 150},
		{"$('ol1').reversed()", true},
		{"$('ol1').start()", 3},
		{"$('ol1').type()", "i"},
		{"$('li1').value()", 7},
		{"$('li1').type()", "square"},
		{"$('li2').value()", 0},
		{"$('li2').type()", ""},
		{"$('ul1').type()", "disc"},
		{"$('pg1').max()", 200},
		{"$('pg1').value()", 0.25},
		{"$('pg1').position()", 0.25},
		{"$('pg2').max()", 1},
		{"$('pg2').value()", 0.25},
		{"$('pg3').value()", 0},
		{"$('pg3').position()", -1},
		{"$('pg4').max()", 1}, // a negative max reads as 1
		{"$('pg4').value()", 3},
		{"$('mt1').min()", 1},
		{"$('mt1').max()", 10},
		{"$('mt1').low()", 2},
		{"$('mt1').high()", 8},
		{"$('mt1').optimum()", 0},
		{"$('mt1').labels().length", 0},
		{"$('out1').htmlFor()", "u cb"},
		{"$('out1').name()", "res"},
		{"$('out1').type()", "output"},
		{"$('out1').value()", "42"},
		{"$('out1').defaultValue()", "42"},
		{"$('out1').form().id()", "f2"},
		// media, track, source, iframe, and the rest
		{"$('v1').controls()", true},
		{"$('v1').muted()", true},
		{"$('v1').defaultMuted()", true},
		{"$('v1').autoplay()", false},
		{"$('v1').loop()", false},
		{"$('v1').preload()", "metadata"},
		{"$('v1').src()", "movie.mp4"},
		{"$('v1').currentSrc()", "movie.mp4"},
		{"$('v1').crossOrigin()", undef},
		{"$('v1').textTracks().map((e) => e.id()).join()", "tk1,tk2"},
		{"$('au1').crossOrigin()", "anonymous"},
		{"$('au1').preload()", "auto"},
		{"$('au1').textTracks().length", 0},
		{"$('tk1').kind()", "captions"},
		{"$('tk1').src()", "c.vtt"},
		{"$('tk1').srclang()", "en"},
		{"$('tk1').label()", "English"},
		{"$('tk1').default()", true},
		{"$('tk2').kind()", "subtitle"},
		{"$('tk2').default()", false},
		{"$('tk2').src()", ""},
		{"$('src1').src()", "s.webm"},
		{"$('src1').type()", "video/webm"},
		{"$('src1').keySystem()", ""},
		{"$('if1').src()", "frame.html"},
		{"$('if1').allowfullscreen()", true},
		{"$('if1').width()", "10"},
		{"$('if1').height()", ""},
		{"$('if1').referrerPolicy()", ""},
		{"$('del1').cite()", "why.html"},
		{"$('del1').datetime()", "2020-01-01"},
		{"$('ins1').cite()", ""},
		{"$('tm1').datetime()", "2021-02-03"},
		{"$('d1').value()", "42"},
		{"$('em1').src()", "e.swf"},
		{"$('em1').type()", "x/y"},
		{"$('em1').width()", "5"},
		{"$('em1').height()", ""},
		{"$('pm1').name()", "a"},
		{"$('pm1').value()", "b"},
		{"$('pre1').name()", "n"},
		{"$('pre1').value()", "v"},
		{"$('q1').cite()", "c.html"},
		// only an element of the tag has them; the generic ones stay
		{"typeof $('sp1').href", "undefined"},
		{"typeof $('a1').rows", "undefined"},
		{"typeof $('u').options", "undefined"},
		{"$('sp1').toString()", "[object html.Node]"},
		// k6 goes by a node's Data, a text's too: the text "a" is an anchor
		{"$('pa').firstChild().href()", ""},
		{"$('pa').firstChild().protocol()", ":"},
		{"$('a1').id()", "a1"},
		{"$('a1').firstChild().nodeValue()", "Link "},
		// Elements a tag method hands out have their own tag's methods
		{"$('f1').elements()[0].value()", "ada"},
		{"$('t1').rows()[1].cells()[0].rowSpan()", 2},
		{"$('s1').options()[2].label()", "Three!"},
		{"$('o2').parentElement().label()", "G"},
	}
	src := tagScript("import { parseHTML } from 'k6/html';\nconst page = "+jsString(tagDoc)+";", "const doc = parseHTML(page);", cases)
	if n, first := runOnce(t, src); n != 0 {
		t.Errorf("%d iteration errors: %s", n, first)
	}
}

// jsString is s as a JS string literal; jsonText, v as JSON.stringify
// writes it (no HTML escapes).
func jsString(s string) string { return jsonText(s) }

func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // the cases are strings, numbers and bools
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Each tag k6 v1.8.1 gives methods to has exactly those, by name (read
// off k6's elements.go and elements_gen.go, the generic Element's aside):
// none missing, none another tag's.
func TestHTMLTagMethodNames(t *testing.T) {
	for _, tt := range []struct{ tags, methods string }{
		{"a area", "accessKey download hash host hostname href hrefLang origin password pathname port protocol referrerPolicy rel relList search target text toString type username"},
		{"audio video", "autoplay controls crossOrigin currentSrc defaultMuted loop mediaGroup muted preload src textTracks"},
		{"base", "href target"},
		{"button", "accessKey autofocus disabled form formAction formEnctype formMethod formNoValidate formTarget labels name tabIndex type value"},
		{"canvas", "height width"},
		{"col", "span"},
		{"data", "value"},
		{"datalist", "options"},
		{"del ins", "cite datetime"},
		{"embed", "height src type width"},
		{"fieldset", "disabled elements form name type validity"},
		{"form", "acceptCharset action autocomplete elements encoding enctype length method name noValidate target"},
		{"iframe", "allowfullscreen height name referrerPolicy src width"},
		{"img", "alt crossOrigin currentSrc height isMap name referrerPolicy sizes src srcset useMap width"},
		{"input", "accept accessKey alt autocomplete autofocus checked defaultChecked defaultValue dirName disabled form formAction formEnctype formMethod formNoValidate formTarget height labels list max maxLength min multiple name pattern placeholder readonly required size src step tabIndex type value width"},
		{"keygen", "autofocus challenge disabled form keytype labels name type"},
		{"label", "control form htmlFor"},
		{"legend", "accessKey form"},
		{"li", "type value"},
		{"link", "crossOrigin href hreflang media referrerPolicy rel relList target type"},
		{"map", "areas images name"},
		{"meta", "content httpEquiv name"},
		{"meter", "high labels low max min optimum"},
		{"object", "data form height name tabIndex type typeMustMatch useMap width"},
		{"ol", "reversed start type"},
		{"optgroup", "disabled label"},
		{"option", "defaultSelected disabled form index label selected text value"},
		{"output", "defaultValue form htmlFor labels name type value"},
		{"param pre", "name value"},
		{"progress", "labels max position value"},
		{"quote", "cite"},
		{"script", "async charset crossOrigin defer noModule src text type"},
		{"select", "autofocus disabled form labels length multiple name options required selectedIndex selectedOptions size tabIndex type value"},
		{"source", "keySystem media sizes src srcset type"},
		{"style", "media type"},
		{"table", "caption rows sortable tBodies tFoot tHead"},
		{"tbody tfoot thead", "rows"},
		{"td", "cellIndex colSpan headers rowSpan"},
		{"textarea", "accessKey autocapitalize autocomplete cols defaultValue form labels length maxLength placeholder readOnly required rows tabIndex type value wrap"},
		{"th", "abbr cellIndex colSpan headers rowSpan scope sorted"},
		{"time", "datetime"},
		{"title", "text"},
		{"tr", "cells rowIndex sectionRowIndex"},
		{"track", "default kind label src srclang"},
		{"ul", "type"},
	} {
		for _, tag := range strings.Fields(tt.tags) {
			t.Run(tag, func(t *testing.T) {
				// In a table cell, so that the parser keeps a tr, a td or a col.
				n, first := runOnce(t, `import { parseHTML } from 'k6/html';
export default function () {
  const tag = '`+tag+`', want = '`+tt.methods+`'.split(' ');
  const generic = new Set(Object.keys(parseHTML('<span></span>').find('span').get(0)));
  const doc = parseHTML('<table><tbody><tr><td><' + tag + '></' + tag + '></td></tr></tbody></table><' + tag + '></' + tag + '>');
  const e = doc.find(tag).get(0);
  if (!e) throw new Error('no ' + tag);
  const got = Object.keys(e).filter((k) => !generic.has(k) || want.includes(k));
  const missing = want.filter((k) => !got.includes(k)), extra = got.filter((k) => !want.includes(k));
  if (missing.length || extra.length) throw new Error('missing ' + missing + '; not k6\'s ' + extra);
}`)
				if n != 0 {
					t.Error(first)
				}
			})
		}
	}
}

// tagURLDoc is served at /dir/sub/page.html, reached by a redirect from
// /start; its <base> is there to show that k6 does not use it.
const tagURLDoc = `<html><head><base id="bs" href="/other/"><base id="bs2"></head><body>
<a id="rel" href="../up/x?y=1#z">r</a>
<a id="abs" href="/root">a</a>
<a id="empty" href="">e</a>
<a id="none">n</a>
<a id="full" href="http://other.example:8080/p">f</a>
<a id="fileurl" href="file:///etc/hosts">file</a>
<img id="im" src="img/p.png"><img id="im2" src="">
<link id="ln" href="//cdn.example/s.css">
<form id="fm" action="post.php"><input id="in" src="i.png"><button id="bt" formaction="?q=2">b</button></form>
<form id="fm2"><button id="bt2">b</button></form>
<form id="fm3" action=""><button id="bt3">b</button></form>
<script id="sc" src="js/app.js"></script>
<iframe id="ifr" src="https://x.example/"></iframe>
<object id="ob" data="o.bin"></object>
<video><track id="tk" src="t.vtt"></video>
</body></html>`

// res.html()'s Elements resolve their URL attributes against res.url, the
// page's URL after the redirect (k6 takes no <base> into account): a
// missing attribute is "", an empty one the page's URL itself, and a
// <base>'s href without one the page's URL. parseHTML of the same body
// gives the attributes as written.
func TestHTMLTagMethodsResolveURLs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/dir/sub/page.html", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(tagURLDoc))
	}))
	t.Cleanup(srv.Close)
	page := srv.URL + "/dir/sub/page.html"
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	cases := []tagCase{
		{"$('rel').href()", srv.URL + "/dir/up/x?y=1#z"},
		{"$('rel').toString()", srv.URL + "/dir/up/x?y=1#z"},
		{"$('rel').pathname()", "/dir/up/x"},
		{"$('rel').search()", "?y=1"},
		{"$('rel').hash()", "#z"},
		{"$('rel').host()", "127.0.0.1:" + port},
		{"$('rel').hostname()", "127.0.0.1"},
		{"$('rel').port()", port},
		{"$('rel').origin()", srv.URL},
		{"$('rel').protocol()", "http"},
		{"$('abs').href()", srv.URL + "/root"},
		{"$('empty').href()", page},
		{"$('empty').pathname()", "/dir/sub/page.html"},
		{"$('none').href()", ""},
		{"$('none').hostname()", ""},
		{"$('none').protocol()", ":"},
		{"$('full').href()", "http://other.example:8080/p"},
		{"$('full').host()", "other.example:8080"},
		{"$('fileurl').origin()", "file:///etc/hosts"},
		{"$('im').src()", srv.URL + "/dir/sub/img/p.png"},
		{"$('im').currentSrc()", srv.URL + "/dir/sub/img/p.png"},
		{"$('im2').src()", page},
		{"$('ln').href()", "http://cdn.example/s.css"},
		{"$('fm').action()", srv.URL + "/dir/sub/post.php"},
		{"$('fm2').action()", ""},
		{"$('fm3').action()", page},
		{"$('in').src()", srv.URL + "/dir/sub/i.png"},
		{"$('in').formAction()", srv.URL + "/dir/sub/post.php"},
		{"$('bt').formAction()", page + "?q=2"},
		{"$('bt2').formAction()", page}, // no action: the page
		{"$('bt3').formAction()", page},
		{"$('sc').src()", srv.URL + "/dir/sub/js/app.js"},
		{"$('ifr').src()", "https://x.example/"},
		{"$('ob').data()", srv.URL + "/dir/sub/o.bin"},
		{"$('tk').src()", srv.URL + "/dir/sub/t.vtt"},
		{"$('bs').href()", srv.URL + "/other/"},
		{"$('bs2').href()", page},
		// the URL goes along to Elements reached from others and to selection()
		{"$('rel').parentElement().querySelector('#abs').href()", srv.URL + "/root"},
		{"$('fm').elements()[0].src()", srv.URL + "/dir/sub/i.png"},
		{"$('rel').selection().parent().find('#abs').get(0).href()", srv.URL + "/root"},
		{"res.html('a').get(1).href()", srv.URL + "/root"},
		{"parseHTML(res.body).find('#rel').get(0).href()", "../up/x?y=1#z"},
		{"parseHTML(res.body).find('#bs2').get(0).href()", ""},
	}
	src := tagScript("import http from 'k6/http';\nimport { parseHTML } from 'k6/html';",
		"const res = http.get(__ENV.BASE + '/start');\n  const doc = res.html();", cases)
	runHTTPOnce(t, src, map[string]string{"BASE": srv.URL})
}
