"""A tiny DOM of a published page (stdlib HTMLParser), for structural assertions."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

VOID = {"meta", "link", "br", "img", "input", "hr", "col", "source", "wbr"}


class Node:
    """One element: tag, attributes, children (nodes and text)."""

    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag: str | None = None):
        for c in self.children:
            if isinstance(c, Node):
                if tag is None or c.tag == tag:
                    yield c
                yield from c.iter(tag)

    def find(self, tag: str, cls: str | None = None) -> Node | None:
        return next(self.find_all(tag, cls), None)

    def find_all(self, tag: str, cls: str | None = None):
        for n in self.iter(tag):
            if cls is None or cls in (n.attrs.get("class") or "").split():
                yield n

    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()


class TreeBuilder(HTMLParser):
    """Feeds HTML, keeps the tree under ``root``; ``cur`` is the open element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        assert n is not None, f"stray </{tag}>"
        self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse_html(text: str, *, name: str = "page") -> Node:
    """The tree of a whole document; fails on an unclosed element."""
    b = TreeBuilder()
    b.feed(text)
    b.close()
    assert b.cur is b.root, f"unclosed <{b.cur.tag}> in {name}"
    return b.root


def parse(path: Path) -> Node:
    """The tree of an HTML file."""
    return parse_html(path.read_text(encoding="utf-8"), name=path.name)
