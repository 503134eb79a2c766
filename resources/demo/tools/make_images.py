"""Draw the demo archive's images with Pillow (run once; the results are committed).

Usage: ``python resources/demo/tools/make_images.py`` from the repository root. Writes into
``resources/demo/media/``. Deterministic: the same Pillow version gives the same files.
Not part of the application.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

OUT = Path(__file__).resolve().parents[1] / "media"
FONT_DIRS = [Path("/usr/share/fonts/truetype/dejavu"), Path("C:/Windows/Fonts")]


def font(size: int, bold: bool = False, serif: bool = False) -> ImageFont.ImageFont:
    """DejaVu if installed, else Pillow's built-in font."""
    name = ("DejaVuSerif" if serif else "DejaVuSans") + ("-Bold" if bold else "") + ".ttf"
    for folder in FONT_DIRS:
        if (folder / name).exists():
            return ImageFont.truetype(str(folder / name), size)
    return ImageFont.load_default(size)


def valley_map() -> None:
    """A hand-drawn-looking map of the valley before the flooding."""
    w, h = 900, 620
    img = Image.new("RGB", (w, h), (243, 234, 210))
    d = ImageDraw.Draw(img)
    rnd = random.Random(1962)
    for _ in range(2500):  # paper grain
        x, y = rnd.randrange(w), rnd.randrange(h)
        d.point((x, y), fill=(228, 217, 190))
    # contour lines of the hills
    for i, (cx, cy) in enumerate([(160, 140), (720, 120), (760, 470), (180, 500)]):
        for r in range(40, 200, 26):
            d.ellipse((cx - r, cy - r * 0.7, cx + r, cy + r * 0.7), outline=(196, 170, 120))
    # the line the water reached in 1962
    water = [(60, 330), (190, 250), (330, 220), (470, 260), (610, 230), (760, 300), (860, 280),
             (860, 400), (700, 430), (560, 390), (420, 420), (280, 380), (140, 430), (60, 410)]
    d.polygon(water, fill=(205, 224, 236))
    d.line(water + [water[0]], fill=(70, 110, 160), width=2)
    # the river Ter
    river = [(20, 360 + 20 * math.sin(x / 70)) for x in range(0, 900, 20)]
    river = [(x, y) for x, (_, y) in zip(range(0, 900, 20), river)]
    d.line(river, fill=(40, 90, 170), width=6)
    # the dam
    d.rectangle((812, 280, 826, 410), fill=(120, 120, 120))
    # villages and farms
    places = [((300, 330), "Sant Romà del Riu", 9), ((560, 315), "Les Feixes", 6),
              ((420, 130), "Vilanova de Sant Romà", 7)]
    for (x, y), name, r in places:
        d.ellipse((x - r, y - r, x + r, y + r), fill=(150, 40, 30))
        d.text((x + r + 6, y - 10), name, fill=(60, 30, 20), font=font(18, bold=True, serif=True))
    for x, y in [(240, 300), (350, 360), (510, 350), (600, 290), (640, 360), (380, 290)]:
        d.rectangle((x - 4, y - 4, x + 4, y + 4), fill=(110, 70, 40))
    d.text((420, 392), "riu Ter", fill=(40, 90, 170), font=font(17, serif=True))
    d.text((830, 250), "presa", fill=(80, 80, 80), font=font(15))
    d.text((40, 30), "La vall de Sant Romà abans del pantà (1958)", fill=(50, 30, 20),
           font=font(26, bold=True, serif=True))
    d.text((40, 570), "— línia de l'aigua, 1962        ■ masos        ● pobles", fill=(60, 50, 40),
           font=font(16))
    d.rectangle((4, 4, w - 5, h - 5), outline=(90, 70, 50), width=3)
    img.save(OUT / "valley_map.png", optimize=True)


def bell_tower_photo() -> None:
    """A photo-like image: sky gradient, low water, the bell tower emerging, a caption."""
    w, h = 800, 560
    img = Image.new("RGB", (w, h))
    px = img.load()
    for y in range(h):
        for x in range(w):
            if y < 300:
                t = y / 300
                px[x, y] = (int(150 + 80 * t), int(185 + 45 * t), int(225 + 10 * t))
            else:
                t = (y - 300) / 260
                px[x, y] = (int(95 + 60 * t), int(120 + 30 * t), int(120 - 20 * t))
    d = ImageDraw.Draw(img)
    d.polygon([(0, 300), (120, 220), (260, 260), (400, 200), (560, 250), (700, 210), (800, 240),
               (800, 300)], fill=(96, 112, 88))
    d.rectangle((0, 330, w, 380), fill=(176, 150, 112))  # the dry bank
    d.rectangle((0, 380, w, h), fill=(88, 118, 128))  # the low water
    x0 = 360
    d.rectangle((x0, 170, x0 + 60, 400), fill=(150, 128, 100))  # the tower
    d.polygon([(x0 - 6, 170), (x0 + 30, 120), (x0 + 66, 170)], fill=(120, 96, 80))
    for yy in (200, 250):
        d.rectangle((x0 + 20, yy, x0 + 40, yy + 28), fill=(50, 40, 35))
    d.rectangle((x0 - 140, 340, x0 - 20, 400), fill=(140, 120, 95))  # church walls
    img = img.filter(ImageFilter.GaussianBlur(1.2))
    d = ImageDraw.Draw(img)
    rnd = random.Random(2008)
    for _ in range(6000):
        x, y = rnd.randrange(w), rnd.randrange(h)
        v = rnd.randrange(-18, 18)
        r, g, b = img.getpixel((x, y))
        d.point((x, y), fill=(r + v, g + v, b + v))
    d.rectangle((0, h - 44, w, h), fill=(20, 20, 20))
    d.text((16, h - 34), "Sant Romà del Riu, abril de 2008 — el campanar surt de l'aigua",
           fill=(240, 240, 240), font=font(18))
    img.save(OUT / "bell_tower_drought_2008.jpg", quality=78, optimize=True)


def colony_mill() -> None:
    """A postcard-like drawing of the textile colony's mill."""
    w, h = 820, 540
    img = Image.new("RGB", (w, h), (232, 220, 196))
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, w, 260), fill=(214, 206, 186))
    d.polygon([(0, 260), (200, 150), (420, 230), (640, 140), (820, 220), (820, 260)],
              fill=(170, 160, 132))
    d.rectangle((0, 430, w, h), fill=(120, 150, 160))  # the Llobregat
    d.rectangle((0, 405, w, 430), fill=(100, 130, 140))  # the canal
    d.rectangle((120, 250, 560, 400), fill=(176, 92, 64), outline=(80, 40, 30), width=3)
    for i in range(11):
        for row in (270, 330):
            x = 140 + i * 38
            d.rectangle((x, row, x + 20, row + 40), fill=(60, 50, 60))
    d.rectangle((600, 110, 636, 400), fill=(150, 80, 60), outline=(80, 40, 30), width=2)
    for k, r in enumerate(range(20, 70, 12)):  # smoke
        d.ellipse((610 + k * 18 - r // 2, 90 - k * 14 - r // 2, 610 + k * 18 + r // 2,
                   90 - k * 14 + r // 2), fill=(170, 170, 170))
    d.rectangle((660, 300, 790, 400), fill=(210, 190, 150), outline=(80, 60, 40), width=2)
    for i in range(3):
        d.rectangle((675 + i * 38, 320, 695 + i * 38, 345), fill=(70, 60, 60))
    d.text((24, 20), "COLÒNIA SERRA — Puig-reig", fill=(60, 30, 20), font=font(30, True, True))
    d.text((24, 60), "Fàbrica de filats i teixits", fill=(70, 40, 30), font=font(20, serif=True))
    d.rectangle((6, 6, w - 7, h - 7), outline=(90, 60, 40), width=4)
    img = img.quantize(64)
    img.save(OUT / "colonia_serra_mill.png", optimize=True)


def coin_sketch(path: str, title: str, obverse: str, reverse: str, draw_rev: str) -> None:
    """Two circles (obverse, reverse) drawn in pencil tones with labels."""
    w, h = 760, 420
    img = Image.new("L", (w, h), 246)
    d = ImageDraw.Draw(img)
    for cx in (200, 560):
        d.ellipse((cx - 150, 60, cx + 150, 360), outline=70, width=4)
        d.ellipse((cx - 136, 74, cx + 136, 346), outline=150, width=1)
    # obverse: a head in profile
    d.ellipse((140, 130, 270, 290), outline=60, width=3)
    d.line([(265, 200), (292, 222), (266, 232)], fill=60, width=3)
    d.arc((120, 100, 270, 250), 180, 300, fill=60, width=5)
    if draw_rev == "horseman":
        d.ellipse((480, 220, 640, 290), outline=60, width=3)  # horse body
        for x in (500, 530, 600, 625):
            d.line([(x, 280), (x + 5, 330)], fill=60, width=3)
        d.line([(630, 240), (665, 200)], fill=60, width=4)  # neck
        d.ellipse((655, 185, 685, 210), outline=60, width=3)
        d.line([(560, 222), (560, 160)], fill=60, width=4)  # rider
        d.ellipse((548, 136, 572, 160), outline=60, width=3)
        d.line([(575, 170), (600, 110)], fill=60, width=3)  # palm
        for k in range(4):
            d.line([(600 - k * 5, 110 + k * 8), (588 - k * 5, 118 + k * 8)], fill=60, width=2)
    else:  # owl
        d.ellipse((500, 150, 620, 320), outline=60, width=3)
        for ex in (530, 570):
            d.ellipse((ex, 175, ex + 28, 203), outline=60, width=3)
            d.ellipse((ex + 10, 185, ex + 18, 193), fill=60)
        d.polygon([(556, 205), (548, 222), (564, 222)], outline=60)
        d.line([(625, 170), (660, 130)], fill=60, width=3)  # olive sprig
        d.text((645, 280), "AΘE", fill=60, font=font(26, True, True))
    d.text((40, 14), title, fill=30, font=font(22, True, True))
    d.text((90, 372), obverse, fill=60, font=font(16))
    d.text((450, 372), reverse, fill=60, font=font(16))
    img.save(OUT / path, optimize=True)


def ripoll_station() -> None:
    """A simple drawing of a station building and a steam locomotive."""
    w, h = 820, 500
    img = Image.new("RGB", (w, h), (238, 236, 226))
    d = ImageDraw.Draw(img)
    d.polygon([(0, 230), (180, 90), (330, 170), (520, 60), (700, 150), (820, 110), (820, 230)],
              fill=(180, 190, 170))
    d.rectangle((60, 150, 420, 330), fill=(214, 190, 150), outline=(90, 70, 50), width=3)
    d.polygon([(40, 150), (240, 90), (440, 150)], fill=(150, 70, 50))
    for i in range(6):
        d.rectangle((85 + i * 55, 200, 115 + i * 55, 260), fill=(90, 70, 60))
    d.text((150, 165), "RIPOLL", fill=(40, 30, 20), font=font(26, True, True))
    d.rectangle((0, 330, w, 345), fill=(150, 150, 150))  # platform
    for x in range(0, w, 24):
        d.rectangle((x, 400, x + 12, 412), fill=(110, 80, 50))  # sleepers
    d.line([(0, 398), (w, 398)], fill=(60, 60, 60), width=4)
    d.line([(0, 414), (w, 414)], fill=(60, 60, 60), width=4)
    d.rectangle((480, 300, 700, 380), fill=(30, 30, 34))  # boiler
    d.rectangle((640, 250, 740, 380), fill=(40, 40, 44))  # cab
    d.rectangle((500, 250, 530, 300), fill=(30, 30, 34))  # chimney
    for cx in (520, 580, 640, 700):
        d.ellipse((cx - 26, 360, cx + 26, 412), outline=(20, 20, 20), width=5, fill=(160, 40, 30))
    for k in range(5):
        r = 18 + k * 9
        d.ellipse((505 - k * 30 - r, 230 - k * 22 - r, 505 - k * 30 + r, 230 - k * 22 + r),
                  fill=(205, 205, 205))
    d.text((24, 450), "Estació de Ripoll, anys cinquanta (dibuix de memòria, 1992)",
           fill=(50, 40, 30), font=font(18, serif=True))
    img = img.quantize(48)
    img.save(OUT / "ripoll_station.png", optimize=True)


def main() -> None:
    """Draw every image."""
    OUT.mkdir(parents=True, exist_ok=True)
    valley_map()
    bell_tower_photo()
    colony_mill()
    coin_sketch("coin_kese_sketch.png", "As de Kese — les Feixes, 2008 (NUM-0011)",
                "anvers: cap masculí", "revers: genet amb palma, KESE", "horseman")
    coin_sketch("coin_athens_owl_sketch.png", "Tetradracma d'Atenes (NUM-0033)",
                "anvers: cap d'Atena", "revers: òliba, AΘE", "owl")
    ripoll_station()
    for path in sorted(OUT.iterdir()):
        print(f"{path.name}: {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
