"""Optimal ordered tree edit distance (Zhang & Shasha 1989) and its mapping.

Used by the matcher's recovery phase on small subtrees only: the cost grows
with the product of the two sizes. Costs are integers so that the back-trace
can compare sums exactly: delete and insert cost 100, an update of a node of
the same type costs up to 100 depending on how different the labels are, and
changing a node's type is never cheaper than deleting and inserting it.
"""

from __future__ import annotations

from Levenshtein import ratio

from histeg.syntax.tree import Node, postorder

INDEL = 100
FORBIDDEN = 10 * INDEL


def _postorder_arrays(root: Node) -> tuple[list[Node], list[int], list[int]]:
    """Nodes (1-based, post-order), leftmost-leaf index of each, keyroots."""
    nodes: list[Node] = [root]  # index 0 is a placeholder
    leftmost: list[int] = [0]
    index_of: dict[int, int] = {}
    for node in postorder(root):
        nodes.append(node)
        position = len(nodes) - 1
        index_of[id(node)] = position
        leftmost.append(leftmost[index_of[id(node.children[0])]] if node.children else position)
    seen: set[int] = set()
    keyroots: list[int] = []
    for position in range(len(nodes) - 1, 0, -1):
        if leftmost[position] not in seen:
            seen.add(leftmost[position])
            keyroots.append(position)
    keyroots.reverse()
    return nodes, leftmost, keyroots


def _update_cost(a: Node, b: Node) -> int:
    if a.type != b.type:
        return FORBIDDEN
    if a.label == b.label:
        return 0
    return INDEL - int(INDEL * ratio(a.label, b.label)) or 1


class ZhangShasha:
    """Edit distance and mapping between two subtrees."""

    def __init__(self, src: Node, dst: Node) -> None:
        self.n1, self.l1, self.k1 = _postorder_arrays(src)
        self.n2, self.l2, self.k2 = _postorder_arrays(dst)
        size1, size2 = len(self.n1), len(self.n2)
        self.td = [[0] * size2 for _ in range(size1)]
        self.fd = [[0] * (size2 + 1) for _ in range(size1 + 1)]
        self._cost_cache: dict[tuple[int, int], int] = {}
        for i in self.k1:
            for j in self.k2:
                self._forest_dist(i, j)

    @property
    def distance(self) -> int:
        return self.td[len(self.n1) - 1][len(self.n2) - 1]

    def _cost(self, i: int, j: int) -> int:
        key = (i, j)
        cost = self._cost_cache.get(key)
        if cost is None:
            cost = self._cost_cache[key] = _update_cost(self.n1[i], self.n2[j])
        return cost

    def _forest_dist(self, i: int, j: int) -> None:
        l1, l2, td, fd = self.l1, self.l2, self.td, self.fd
        li, lj = l1[i], l2[j]
        fd[li - 1][lj - 1] = 0
        for di in range(li, i + 1):
            fd[di][lj - 1] = fd[di - 1][lj - 1] + INDEL
        row0 = fd[li - 1]
        for dj in range(lj, j + 1):
            row0[dj] = row0[dj - 1] + INDEL
        for di in range(li, i + 1):
            row, prev = fd[di], fd[di - 1]
            ldi = l1[di]
            td_row = td[di]
            same_left = ldi == li
            base_row = fd[ldi - 1]
            for dj in range(lj, j + 1):
                ldj = l2[dj]
                best = prev[dj] + INDEL
                other = row[dj - 1] + INDEL
                if other < best:  # noqa: PLR1730  the innermost loop: min() would cost a call per cell
                    best = other
                if same_left and ldj == lj:
                    other = prev[dj - 1] + self._cost(di, dj)
                    if other < best:  # noqa: PLR1730  as above
                        best = other
                    row[dj] = best
                    td_row[dj] = best
                else:
                    other = base_row[ldj - 1] + td_row[dj]
                    row[dj] = other if other < best else best  # noqa: FURB136  as above

    def mapping(self) -> list[tuple[Node, Node]]:
        """The node pairs of an optimal script (back-trace of the forest distances)."""
        l1, l2, fd = self.l1, self.l2, self.fd
        pairs: list[tuple[Node, Node]] = []
        stack = [(len(self.n1) - 1, len(self.n2) - 1)]
        first_pair = True
        while stack:
            last_row, last_col = stack.pop()
            if not first_pair:
                self._forest_dist(last_row, last_col)
            first_pair = False
            first_row, first_col = l1[last_row] - 1, l2[last_col] - 1
            row, col = last_row, last_col
            while row > first_row or col > first_col:
                if row > first_row and fd[row - 1][col] + INDEL == fd[row][col]:
                    row -= 1
                elif col > first_col and fd[row][col - 1] + INDEL == fd[row][col]:
                    col -= 1
                elif l1[row] - 1 == l1[last_row] - 1 and l2[col] - 1 == l2[last_col] - 1:
                    a, b = self.n1[row], self.n2[col]
                    if a.type == b.type:
                        pairs.append((a, b))
                    row -= 1
                    col -= 1
                else:
                    stack.append((row, col))
                    row, col = l1[row] - 1, l2[col] - 1
        return pairs
