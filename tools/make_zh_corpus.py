"""Rebuild ``assets/tang_poems_zh.txt``, the course's Chinese corpus (``tinylm-train --corpus zh``), from the npm
package it comes from, byte for byte.

Source: the npm package ``chinese-poetry`` 2.0.1 (https://www.npmjs.com/package/chinese-poetry, the data of
github.com/chinese-poetry/chinese-poetry; tarball sha512 below). Its licence field and LICENSE file say MIT,
"Copyright (c) 2016 JackeyGao" (the compilation); the poems themselves are Tang-dynasty texts (618-907), in the
public domain. The MIT notice is kept in ``assets/README.md``.

Selection (10,622 poems by 74 poets: 650,852 characters, 1,834,606 bytes):

- the poems of 全唐诗 (``dist/quantangshi/poet.tang.<n>.json``, in the order of its volumes: files by number,
  poems as listed), in traditional characters;
- by the 74 poets of 唐诗三百首 (``dist/mengxue/tangshisanbaishou.json``, the anthology Chinese schools teach from)
  that 全唐诗 names the same way;
- regulated verse only (近体诗: 五言 / 七言 绝句 and 律诗): 2 or 4 couplets, each ``line，line。`` (or ``？``,
  ``！``) with both lines of 5 Chinese characters, or both of 7, the same in the whole poem, so no missing character
  (``□``), note or variant reading is in the text;
- a poem whose simplified text is the same as an earlier one's is kept once; at most 300 poems per poet (白居易
  alone has 1,855: without the cap he would be a fifth of the corpus and the file over 2 MiB); a title loses its
  notes in （） and the editors' marks ``[]“”`` (``[澧]``: a doubtful character), and a poem whose title is then
  empty or has a ``□`` or a ``{`` (a character described by its parts, ``{氵寉}``) is left out;
- a poem whose simplified text (author and title too) has a character outside the basic block of CJK ideographs
  (U+4E00-U+9FFF) is left out: for some rare characters OpenCC writes simplified forms that Unicode added in its
  extensions A-H (鳷鵲 -> 𫛛鹊), which most fonts cannot show.

Each poem is converted to simplified characters with OpenCC's ``t2s`` table and written as one paragraph: the line
``作者《标题》``, then one line per couplet; paragraphs are separated by a blank line, and the file ends with a
newline.

OpenCC is this tool's dependency only (the course does not need it). Get the pure-Python wheel, then run::

    pip install --target /tmp/opencc opencc-python-reimplemented==0.1.7
    PYTHONPATH=/tmp/opencc python tools/make_zh_corpus.py            # npm pack chinese-poetry@2.0.1, write the file
    PYTHONPATH=/tmp/opencc python tools/make_zh_corpus.py --check    # exit 1 if the file is not what it builds
    PYTHONPATH=/tmp/opencc python tools/make_zh_corpus.py --tarball chinese-poetry-2.0.1.tgz   # no npm needed

The tarball (85.5 MB) is read as a stream: nothing is unpacked to disk.
"""
from __future__ import annotations

import argparse
import base64
import collections
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "tang_poems_zh.txt"
PACKAGE, VERSION = "chinese-poetry", "2.0.1"
INTEGRITY = "sha512-KtYARvV7CWNtax0na9+Jn6PlhGgSoid7PWyDzXI4KsCEm2odZcqEQyval5koaLygZnM/EQ3lfJ//25K8p3uHNg=="
"""The registry's ``dist.integrity`` of chinese-poetry 2.0.1 (``npm view chinese-poetry@2.0.1 dist.integrity``)."""
OPENCC = "0.1.7"
PER_POET = 300
LIMIT = 2 * 2 ** 20  # bytes: assets/ keeps every file under 2 MiB

COUPLET = re.compile(r"^([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})，([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})[。？！]$")
RARE = re.compile(r"[\u3400-\u4dbf\U00020000-\U0003ffff]")  # CJK extensions A-H: OpenCC's rarest simplified forms
TANG = re.compile(r"^package/dist/quantangshi/poet\.tang\.(\d+)\.json$")
ANTHOLOGY = "package/dist/mengxue/tangshisanbaishou.json"


def regulated(couplets: list[str]) -> bool:
    """A 五言 or 七言 绝句 (2 couplets) or 律诗 (4): every couplet ``line，line。`` with lines of one length."""
    if len(couplets) not in (2, 4):
        return False
    lengths = set()
    for couplet in couplets:
        m = COUPLET.match(couplet)
        if m is None:
            return False
        lengths |= {len(m.group(1)), len(m.group(2))}
    return len(lengths) == 1


def read_package(tarball: Path) -> tuple[dict, list[dict], list[dict]]:
    """``package.json``, 唐诗三百首's sections and 全唐诗's poems (in order) from the npm tarball."""
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if digest != INTEGRITY:
        raise SystemExit(f"{tarball}: sha512 {digest}, expected {INTEGRITY} ({PACKAGE} {VERSION})")
    meta, anthology, volumes = None, None, {}
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar:
            name = member.name
            if name == "package/package.json":
                meta = json.load(tar.extractfile(member))
            elif name == ANTHOLOGY:
                anthology = json.load(tar.extractfile(member))["content"]
            elif (m := TANG.match(name)) is not None:
                volumes[int(m.group(1))] = json.load(tar.extractfile(member))
    if meta is None or meta.get("version") != VERSION or meta.get("license") != "MIT" or anthology is None:
        raise SystemExit(f"{tarball} is not {PACKAGE} {VERSION} (MIT) with {ANTHOLOGY}")
    return meta, anthology, [poem for n in sorted(volumes) for poem in volumes[n]]


def build(tarball: Path) -> tuple[str, dict]:
    """The corpus text and numbers about it."""
    try:
        from importlib.metadata import version

        from opencc import OpenCC
        if version("opencc-python-reimplemented") != OPENCC:
            raise ImportError(f"opencc-python-reimplemented {version('opencc-python-reimplemented')}")
    except ImportError as e:
        raise SystemExit(f"needs opencc-python-reimplemented=={OPENCC} ({e}): pip install --target /tmp/opencc "
                         f"opencc-python-reimplemented=={OPENCC}, then PYTHONPATH=/tmp/opencc python {sys.argv[0]}")
    t2s = OpenCC("t2s").convert
    _, anthology, poems = read_package(tarball)
    poets = {poem["author"] for section in anthology for poem in section["content"]}
    per_poet, seen, out = collections.Counter(), set(), []
    for poem in poems:
        author, couplets = poem.get("author", ""), poem.get("paragraphs") or []
        if author not in poets or per_poet[author] >= PER_POET or not regulated(couplets):
            continue
        title = re.sub(r"[][“”]", "", re.sub(r"（[^）]*）", "", poem.get("title", ""))).strip()
        if not title or "□" in title or "{" in title:
            continue
        body = t2s("\n".join(couplets))
        heading = f"{t2s(author)}《{t2s(title)}》"
        if body in seen or RARE.search(heading + body):
            continue
        seen.add(body)
        per_poet[author] += 1
        out.append(f"{heading}\n{body}")
    text = "\n\n".join(out) + "\n"
    size = len(text.encode("utf-8"))
    if size > LIMIT:
        raise SystemExit(f"the corpus would be {size:,} bytes, over {LIMIT:,}")
    return text, {"poems": len(out), "poets": len(per_poet), "chars": len(text), "bytes": size,
                  "distinct_chars": len(set(text))}


def npm_pack(folder: Path) -> Path:
    """``npm pack chinese-poetry@2.0.1`` into ``folder``: the tarball's path."""
    subprocess.run(["npm", "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(folder), "--loglevel=error"],
                   check=True, stdout=subprocess.DEVNULL)
    return folder / f"{PACKAGE}-{VERSION}.tgz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", type=Path, help=f"{PACKAGE}-{VERSION}.tgz already downloaded (default: npm pack)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="do not write: exit 1 if --out differs from the build")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        text, numbers = build(args.tarball or npm_pack(Path(tmp)))
    print(", ".join(f"{k} {v:,}" for k, v in numbers.items()))
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'differs from the build'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
