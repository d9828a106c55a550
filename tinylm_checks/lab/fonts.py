"""Chinese labels in matplotlib figures: a CJK font as the fallback of the usual one, when the language is Chinese.

Matplotlib's default font (DejaVu Sans) has no Chinese glyphs: a Chinese title would draw as empty boxes, with a
"Glyph ... missing from font" warning. :func:`use_language_font` adds Noto Sans CJK SC (the ``mplfonts`` package
ships it; Debian's ``fonts-noto-cjk`` has it too) behind DejaVu Sans, so Latin text looks as it always did and each
Chinese character comes from the fallback (matplotlib 3.6+ falls back glyph by glyph).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

__all__: list[str] = []

SYSTEM_FONTS = (Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
                Path("/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf"))


def cjk_font_file() -> Path | None:
    """The CJK font file to use: mplfonts' Noto Sans CJK SC, else Debian's; None when neither is installed."""
    spec = importlib.util.find_spec("mplfonts")
    candidates = [Path(p) / "fonts" / "NotoSansCJKsc-Regular.otf" for p in (spec.submodule_search_locations or [])] \
        if spec is not None else []
    return next((p for p in [*candidates, *SYSTEM_FONTS] if p.is_file()), None)


def use_language_font(lang: str) -> str | None:
    """For Chinese, make matplotlib draw Chinese glyphs (a CJK font behind its usual sans-serif font); return the
    font's family name, or None for English or when no CJK font is installed (then matplotlib warns of missing
    glyphs, and the text is still right)."""
    if lang != "zh":
        return None
    path = cjk_font_file()
    if path is None:
        return None
    import matplotlib
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(path))
    name = font_manager.FontProperties(fname=str(path)).get_name()
    # a list of families: matplotlib takes each glyph from the first of them that has it (a generic family such as
    # "sans-serif" stands for one font, its first installed one)
    families = [f for f in matplotlib.rcParams["font.family"] if f != name]
    matplotlib.rcParams["font.family"] = [*families, name]
    return name
