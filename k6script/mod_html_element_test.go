package k6script

import (
	"strings"
	"testing"
)

// k6/html's Element against a fixed document whose answers are read off
// the markup by hand: ids, classes, attributes, the tree around <li id=b>
// (its parent <ul>, siblings a and c, the whitespace text between them),
// and the node types and names the DOM gives. The script throws on the
// first mismatch, naming the case.
func TestHTMLElementAPI(t *testing.T) {
	n, first := runOnce(t, `import { parseHTML } from 'k6/html';
const doc = parseHTML('<html lang="en"><body><ul id="list" class="menu  top"><li id="a">one</li> <li id="b" class="x" data-k="v">two<b>!</b></li> <li id="c">three</li></ul><p>no attrs</p><svg><circle r="1"></circle></svg></body></html>');
export default function () {
  const ul = doc.find('ul').get(0);
  const b = doc.find('#b').get(0);
  const p = doc.find('p').get(0);
  const want = [
    ['ul.id', ul.id(), 'list'],
    ['ul.className', ul.className(), 'menu  top'],
    ['ul.classList', ul.classList().join('|'), 'menu|top'],
    ['p.className', p.className(), undefined],
    ['p.id', p.id(), ''],
    ['b.hasAttribute data-k', b.hasAttribute('data-k'), true],
    ['b.hasAttribute href', b.hasAttribute('href'), false],
    ['b.hasAttributes', b.hasAttributes(), true],
    ['p.hasAttributes', p.hasAttributes(), false],
    ['b.getAttribute', b.getAttribute('data-k'), 'v'],
    ['b.getAttribute missing', b.getAttribute('nope'), undefined],
    ['b.attributes', Object.keys(b.attributes()).sort().join(','), 'class,data-k,id'],
    ['b.attributes value', b.attributes()['data-k'].value, 'v'],
    ['b.getAttributeNode', b.getAttributeNode('class').localName(), 'class'],
    ['b.parentElement', b.parentElement().id(), 'list'],
    ['b.parentNode', b.parentNode().id(), 'list'],
    ['b.textContent', b.textContent(), 'two!'],
    ['b.innerHTML', b.innerHTML(), 'two<b>!</b>'],
    ['b.nodeName', b.nodeName(), 'li'],
    ['b.nodeType', b.nodeType(), 1],
    ['b.firstChild', b.firstChild().nodeName(), '#text'],
    ['b.firstChild type', b.firstChild().nodeType(), 3],
    ['b.firstChild value', b.firstChild().nodeValue(), 'two'],
    ['b.lastChild', b.lastChild().nodeName(), 'b'],
    ['b.firstElementChild', b.firstElementChild().textContent(), '!'],
    ['b.previousSibling', b.previousSibling().nodeValue(), ' '],
    ['b.previousElementSibling', b.previousElementSibling().id(), 'a'],
    ['b.nextElementSibling', b.nextElementSibling().id(), 'c'],
    ['c.nextElementSibling', doc.find('#c').get(0).nextElementSibling(), undefined],
    ['ul.children', ul.children().map((e) => e.id()).join(','), 'a,b,c'],
    ['ul.childNodes', ul.childNodes().length, 5],
    ['ul.childElementCount', ul.childElementCount(), 3],
    ['ul.hasChildNodes', ul.hasChildNodes(), true],
    ['b.firstElementChild.hasChildNodes', b.firstElementChild().firstChild().hasChildNodes(), false],
    ['ul.querySelector', ul.querySelector('.x').id(), 'b'],
    ['ul.querySelectorAll', ul.querySelectorAll('li').length, 3],
    ['ul.getElementsByTagName', ul.getElementsByTagName('li')[2].id(), 'c'],
    ['ul.getElementsByClassName', ul.getElementsByClassName('x')[0].id(), 'b'],
    ['b.matches', b.matches('li.x'), true],
    ['ul.contains b', ul.contains(b), true],
    ['b.contains ul', b.contains(ul), false],
    ['ul.contains ul', ul.contains(ul), false],
    ['b.isSameNode', b.isSameNode(doc.find('li').get(1)), true],
    ['b.isSameNode a', b.isSameNode(doc.find('li').get(0)), false],
    ['b.isEqualNode', b.isEqualNode(doc.find('#b').get(0)), true],
    ['b.toString', b.toString(), '[object html.Node]'],
    ['text.toString', b.firstChild().toString(), '[object #text]'],
    ['html.lang', doc.find('html').get(0).lang(), 'en'],
    ['b.lang', b.lang(), undefined],
    ['ownerDocument', b.ownerDocument().nodeType(), 9],
    ['namespaceURI', b.namespaceURI(), 'http://www.w3.org/1999/xhtml'],
    ['svg namespaceURI', doc.find('circle').get(0).namespaceURI(), 'http://www.w3.org/2000/svg'],
    ['svg isDefaultNamespace', doc.find('circle').get(0).isDefaultNamespace(), false],
    ['selection', b.selection().find('b').text(), '!'],
    ['get()', doc.find('li').get().map((e) => e.id()).join(','), 'a,b,c'],
    ['get(-1)', doc.find('li').get(-1).id(), 'c'],
    ['get(-3)', doc.find('li').get(-3), undefined],
    ['get(3)', doc.find('li').get(3), undefined],
  ];
  const ids = [];
  doc.find('li').each((i, e) => { ids.push(i + e.id()); });
  want.push(['each', ids.join(','), '0a,1b,2c']);
  want.forEach(([name, got, w]) => { if (got !== w) throw new Error(name + ': got ' + got); });
  b.parentElement().parentElement().parentElement().parentElement().id();
}`)
	if n != 1 || !strings.Contains(first, "Cannot read property 'id' of undefined") {
		t.Errorf("%d errors, first %q; want only the TypeError past the root", n, first)
	}
}
