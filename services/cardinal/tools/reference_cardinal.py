#!/usr/bin/env python3
"""Independent reference of the Cardinal rules, to check golden fixtures.

Written afresh from docs/rules/cardinal.md (not from the Rust engine): it
replays a fixture's records, checking that each comes from the seat to act
and is legal (CA-1 ... CA-19), applies forced passes and the end of the game
(CA-20, CA-21), draws the default first seat from the seed with the engine's
documented generator (services/engine/tools/reference_shuffle.py), and
recomputes the final scores and winners (CA-22 ... CA-24).

    python3 reference_cardinal.py tests/fixtures/cardinal-golden-4p.json ...

Prints the recomputed result of each fixture; exits 1 on any disagreement.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "engine", "tools"))
from reference_shuffle import below, words  # noqa: E402

SHAPES = ("house", "tower", "square")
CATHEDRAL = {(0, 0): ("house", None), (1, 0): ("tower", None)}


def neighbours(cell):
    x, y = cell
    return [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)]


def footprint(shape, x, y, orientation):
    if shape == "square":
        return [(x, y), (x + 1, y)] if orientation == "horizontal" else [(x, y), (x, y + 1)]
    return [(x, y)]


class Refused(Exception):
    pass


class Cardinal:
    def __init__(self, players, first):
        self.players = players
        self.board = dict(CATHEDRAL)  # cell -> (shape, colour or None)
        self.buildings = []  # (seat, shape, colour, cells)
        self.cardinal = None
        self.supply = [12] * 4
        self.taken = [[0] * 4 for _ in range(players)]
        self.stock = {(c, s): 2 for c in range(4) for s in SHAPES}
        self.last = None
        self.to_act = first
        self.phase = "build"
        self.passes = []

    def own(self, seat):
        return [seat, seat + 2] if self.players == 2 else [seat]

    def playable(self, seat):
        return self.own(seat) + ([3] if self.players == 3 else [])

    def scores_colour(self, colour):
        return not (self.players == 3 and colour == 3)

    def placement_ok(self, seat, shape, colour, cells):
        if colour not in self.playable(seat) or self.stock[(colour, shape)] == 0:
            return False
        if self.last is not None and (shape == self.last[0] or colour == self.last[1]):
            return False
        if any(c in self.board or c == self.cardinal for c in cells):
            return False
        touched = [self.board[n] for c in cells for n in neighbours(c) if n in self.board]
        if not touched:
            return False
        shapes = {s for s, _ in touched}
        colours = {c for _, c in touched}
        if shape != "house" and "house" not in shapes:
            return False
        return shape not in shapes and colour not in colours

    def can_build(self, seat):
        zones = {n for c in self.board for n in neighbours(c) if n not in self.board}
        for z in zones:
            for colour in self.playable(seat):
                for shape in ("house", "tower"):
                    if self.placement_ok(seat, shape, colour, [z]):
                        return True
                for o, (dx, dy) in (("horizontal", (1, 0)), ("vertical", (0, 1))):
                    for ax, ay in (z, (z[0] - dx, z[1] - dy)):
                        if self.placement_ok(seat, "square", colour, footprint("square", ax, ay, o)):
                            return True
        return False

    def play(self, seat, move):
        if seat != self.to_act:
            raise Refused(f"seat {seat} is not to act ({self.to_act} is)")
        kind = move["type"]
        if self.phase == "build":
            if kind != "build":
                raise Refused("a turn starts with a build")
            shape, colour = move["shape"], move["colour"]
            if (shape == "square") != ("orientation" in move):
                raise Refused("orientation is for squares only")
            first = not self.buildings
            bonus = move.get("bonus_colour")
            if first != (bonus is not None) or (bonus is not None and not (0 <= bonus < 4 and self.scores_colour(bonus))):
                raise Refused("bonus colour")
            cells = footprint(shape, move["x"], move["y"], move.get("orientation"))
            if not self.placement_ok(seat, shape, colour, cells):
                raise Refused(f"illegal placement {move}")
            edges = [0] * 4
            for c in cells:
                for n in neighbours(c):
                    if n in self.board and self.board[n][1] is not None:
                        edges[self.board[n][1]] += 1
            for c in range(4):
                if self.scores_colour(c):
                    got = min(edges[c], self.supply[c])
                    self.supply[c] -= got
                    self.taken[seat][c] += got
            if bonus is not None:
                self.supply[bonus] -= 1
                self.taken[seat][bonus] += 1
            for c in cells:
                self.board[c] = (shape, colour)
            self.buildings.append((seat, shape, colour, cells))
            self.stock[(colour, shape)] -= 1
            self.last = (shape, colour)
            self.phase = "cardinal"
            return
        if kind == "keep_cardinal":
            if self.cardinal is None:
                raise Refused("the first player must place the cardinal")
        elif kind == "move_cardinal":
            to = (move["x"], move["y"])
            if to == self.cardinal or to in self.board or not any(n in self.board for n in neighbours(to)):
                raise Refused(f"cardinal to {to}")
            self.cardinal = to
        else:
            raise Refused("the cardinal step comes after the build")
        for k in range(1, self.players + 1):
            nxt = (seat + k) % self.players
            if self.can_build(nxt):
                self.passes += [(seat + j) % self.players for j in range(1, k)]
                self.to_act, self.phase = nxt, "build"
                return
        self.to_act, self.phase = None, "over"

    def result(self):
        rows = []
        for seat in range(self.players):
            counts = list(self.taken[seat])
            for c in self.own(seat):
                counts[c] += self.supply[c]
            total = sum(counts) + max(counts)
            contacts = sum(
                1
                for (s, _, colour, cells) in self.buildings
                if colour in self.own(seat)
                for c in cells
                for n in neighbours(c)
                if n in CATHEDRAL
            )
            rows.append((total, contacts))
        best = max(rows)
        return [r[0] for r in rows], [s for s in range(self.players) if rows[s] == best]


def check(path):
    fixture = json.load(open(path))
    players = fixture["players"]
    first = fixture["options"].get("first_seat")
    if first is None:
        first = below(words(bytes.fromhex(fixture["seed"])), players)
    game = Cardinal(players, first)
    for i, record in enumerate(fixture["moves"]):
        try:
            game.play(record["seat"], record["move"])
        except Refused as err:
            print(f"{path}: record {i} refused: {err}")
            return False
    if game.phase != "over":
        print(f"{path}: the game is not over after its records")
        return False
    scores, winners = game.result()
    expected = fixture["expected"]
    got = {"scores": scores, "winners": winners, "buildings": len(game.buildings), "forced_passes": game.passes}
    print(f"{path}: first seat {first}, {got}")
    ok = all(expected[k] == v for k, v in got.items())
    if not ok:
        print(f"{path}: expected {expected}")
    return ok


if __name__ == "__main__":
    results = [check(p) for p in sys.argv[1:]]
    sys.exit(0 if results and all(results) else 1)
