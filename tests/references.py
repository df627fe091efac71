"""Independent references: who sends what to whom in each step, written from the sources.

Each function follows its paper or reference implementation directly — MPICH's C loops
(send_idx, recv_idx, last_idx, cnts, disps), NCCL's ncclGetBtree / ncclGetDtree with
their children (d0, d1), an as-soon-as-possible pipeline for the trees, the classic
ring rule — and speaks in element ranges, not in ringsim's segments. None of it imports
ringsim's plan code. A step is a set of (src, dst, first element, end element, op).
"""

from __future__ import annotations

Move = tuple[int, int, int, int, str]


def counts(n: int, parts: int) -> list[int]:
    """MPICH's cnts: count/pof2 each, the first count % pof2 one more."""
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def disps(cnts: list[int]) -> list[int]:
    out = [0]
    for c in cnts:
        out.append(out[-1] + c)
    return out


# --- MPICH: recursive doubling and Rabenseifner's reduce-scatter + allgather ---------------
def _pof2(g: int) -> int:
    p = 1
    while p * 2 <= g:
        p *= 2
    return p


def _fold(g: int, n: int) -> tuple[list[set[Move]], list[set[Move]]]:
    rem = g - _pof2(g)
    if not rem:
        return [], []
    first = {(rank, rank + 1, 0, n, "reduce") for rank in range(0, 2 * rem, 2)}
    last = {(rank, rank - 1, 0, n, "copy") for rank in range(1, 2 * rem, 2)}
    return [first], [last]


def _real(newrank: int, rem: int) -> int:
    return newrank * 2 + 1 if newrank < rem else newrank + rem


def recursive_doubling(g: int, n: int) -> list[set[Move]]:
    """allreduce_intra_recursive_doubling.c: mask = 1, 2, …; exchange whole buffers with newrank ^ mask."""
    pof2, rem = _pof2(g), g - _pof2(g)
    before, after = _fold(g, n)
    steps = []
    mask = 1
    while mask < pof2:
        steps.append({(_real(r, rem), _real(r ^ mask, rem), 0, n, "reduce") for r in range(pof2)})
        mask <<= 1
    return before + steps + after


def halving_doubling(g: int, n: int) -> list[set[Move]]:
    """allreduce_intra_reduce_scatter_allgather.c, rank by rank, as its loops run."""
    pof2, rem = _pof2(g), g - _pof2(g)
    cnts = counts(n, pof2)
    disp = disps(cnts)
    before, after = _fold(g, n)
    state = {r: {"send_idx": 0, "recv_idx": 0, "last_idx": pof2} for r in range(pof2)}
    rs: list[set[Move]] = []
    mask = 1
    while mask < pof2:
        moves = set()
        for r, st in state.items():
            newdst = r ^ mask
            if r < newdst:
                st["send_idx"] = st["recv_idx"] + pof2 // (mask * 2)
                lo, hi = st["send_idx"], st["last_idx"]
            else:
                st["recv_idx"] = st["send_idx"] + pof2 // (mask * 2)
                lo, hi = st["send_idx"], st["recv_idx"]
            moves.add((_real(r, rem), _real(newdst, rem), disp[lo], disp[hi], "reduce"))
        for st in state.values():
            st["send_idx"] = st["recv_idx"]
        mask <<= 1
        if mask < pof2:
            for st in state.values():
                st["last_idx"] = st["recv_idx"] + pof2 // mask
        rs.append(moves)
    ag: list[set[Move]] = []
    mask >>= 1
    while mask > 0:
        moves = set()
        for r, st in state.items():
            newdst = r ^ mask
            if r < newdst:
                if mask != pof2 // 2:
                    st["last_idx"] = st["last_idx"] + pof2 // (mask * 2)
                st["recv_idx"] = st["send_idx"] + pof2 // (mask * 2)
                lo, hi = st["send_idx"], st["recv_idx"]
            else:
                st["recv_idx"] = st["send_idx"] - pof2 // (mask * 2)
                lo, hi = st["send_idx"], st["last_idx"]
            moves.add((_real(r, rem), _real(newdst, rem), disp[lo], disp[hi], "copy"))
        for r, st in state.items():
            if r > (r ^ mask):
                st["send_idx"] = st["recv_idx"]
        mask >>= 1
        ag.append(moves)
    return before + rs + ag + after


# --- NCCL: binary tree and double binary tree (src/graph/trees.cc) ------------------------
def get_btree(nranks: int, rank: int) -> tuple[int, int, int]:
    """ncclGetBtree: (up, down0, down1), −1 for none."""
    bit = 1
    while bit < nranks:
        if bit & rank:
            break
        bit <<= 1
    if rank == 0:
        return -1, -1, (bit >> 1 if nranks > 1 else -1)
    up = (rank ^ bit) | (bit << 1)
    if up >= nranks:
        up = rank ^ bit
    lowbit = bit >> 1
    down0 = -1 if lowbit == 0 else rank - lowbit
    down1 = -1 if lowbit == 0 else rank + lowbit
    while down1 >= nranks:
        down1 = -1 if lowbit == 0 else rank + lowbit
        lowbit >>= 1
    return up, down0, down1


def get_dtree_second(nranks: int, rank: int) -> tuple[int, int, int]:
    """ncclGetDtree's second tree: mirror (even nranks) or shift by one (odd)."""
    if nranks % 2 == 1:
        u, d0, d1 = get_btree(nranks, (rank - 1 + nranks) % nranks)
        f = lambda x: -1 if x == -1 else (x + 1) % nranks  # noqa: E731
    else:
        u, d0, d1 = get_btree(nranks, nranks - 1 - rank)
        f = lambda x: -1 if x == -1 else nranks - 1 - x  # noqa: E731
    return f(u), f(d0), f(d1)


def pipelined_tree(links: dict[int, tuple[int, list[int]]], chunks: list[tuple[int, int]]) -> dict[int, set[Move]]:
    """Reduce up, broadcast down, chunk by chunk, each as soon as it can go (one chunk per link per step).

    links: rank → (parent, children). chunks: element ranges. Returns step → moves.
    """
    steps: dict[int, set[Move]] = {}
    root = next(r for r, (up, _) in links.items() if up == -1)
    ready: dict[tuple[int, int], int] = {}      # (rank, chunk) → step after which its subtree sum is there
    up_free: dict[int, int] = {}
    down_free: dict[tuple[int, int], int] = {}

    def subtree_done(rank: int, c: int) -> int:
        if (rank, c) in ready:
            return ready[(rank, c)]
        _, kids = links[rank]
        t = 0
        for k in kids:
            t = max(t, send_up(k, c) + 1)
        ready[(rank, c)] = t
        return t

    def send_up(rank: int, c: int) -> int:
        t = max(subtree_done(rank, c), up_free.get(rank, 0))
        up_free[rank] = t + 1
        lo, hi = chunks[c]
        steps.setdefault(t, set()).add((rank, links[rank][0], lo, hi, "reduce"))
        return t

    def send_down(rank: int, c: int, start: int) -> None:
        for k in links[rank][1]:
            t = max(start, down_free.get((rank, k), 0))
            down_free[(rank, k)] = t + 1
            lo, hi = chunks[c]
            steps.setdefault(t, set()).add((rank, k, lo, hi, "copy"))
            send_down(k, c, t + 1)

    for c in range(len(chunks)):
        send_down(root, c, subtree_done(root, c))
    return steps


def _tree_links(g: int, get) -> dict[int, tuple[int, list[int]]]:
    links = {}
    for r in range(g):
        up, d0, d1 = get(g, r)
        links[r] = (up, [d for d in (d0, d1) if d != -1])
    return links


def tree(g: int, n: int, chunks: int) -> list[set[Move]]:
    """NCCL's binary tree, chunks pipelined."""
    if g == 1:
        return []
    d = disps(counts(n, chunks))
    by_step = pipelined_tree(_tree_links(g, get_btree), [(d[c], d[c + 1]) for c in range(chunks)])
    return [by_step.get(t, set()) for t in range(max(by_step) + 1)]


def double_tree(g: int, n: int, chunks: int) -> list[set[Move]]:
    """NCCL's double binary tree: the first half of the data on the btree, the second on its mirror/shift."""
    if g == 1:
        return []
    d = disps(counts(n, 2 * chunks))
    one = pipelined_tree(_tree_links(g, get_btree), [(d[c], d[c + 1]) for c in range(chunks)])
    two = pipelined_tree(_tree_links(g, get_dtree_second),
                         [(d[c], d[c + 1]) for c in range(chunks, 2 * chunks)])
    last = max(max(one), max(two))
    return [one.get(t, set()) | two.get(t, set()) for t in range(last + 1)]


def get_dtree(nranks: int, rank: int) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """ncclGetDtree, both trees: (up, down0, down1, parentChildType) each; the type is the
    child's side below its parent in the tree's own numbering: 0 when its rank is the lower."""
    def typed(r: int) -> tuple[int, int, int, int]:
        u, d0, d1 = get_btree(nranks, r)
        return u, d0, d1, (0 if r < u else 1) if r != 0 else 0
    first = typed(rank)
    if nranks % 2 == 1:
        u, d0, d1, kind = typed((rank - 1 + nranks) % nranks)
        f = lambda x: -1 if x == -1 else (x + 1) % nranks  # noqa: E731
    else:
        u, d0, d1, kind = typed(nranks - 1 - rank)
        f = lambda x: -1 if x == -1 else nranks - 1 - x  # noqa: E731
    return first, (f(u), f(d0), f(d1), kind)


def nccl_tree_links(g: int, per: int) -> list[dict[int, tuple[int, list[int]]]]:
    """NCCL's two trees as connect.cc builds them (ncclTopoPreset, then connectTrees), BALANCED_TREE.

    treeIntra of node n is its GPUs in order; up/down[0] follow the chain; treeToParent is
    treeIntra[0], treeToChild0 treeIntra[1] (treeIntra[0] with one GPU: pattern TREE),
    treeToChild1 treeIntra[0]. The node's tree parent adopts it through ttc0 or ttc1 by its
    parentChildType; its children attach to ttc0 / ttc1 by down0 / down1.
    """
    nodes = g // per
    intra = [[node * per + i for i in range(per)] for node in range(nodes)]
    child0 = 1 if per > 1 else 0
    ttp = [intra[n][0] for n in range(nodes)]
    ttc0 = [intra[n][child0] for n in range(nodes)]
    ttc1 = [intra[n][0] for n in range(nodes)]
    trees = []
    for t in range(2):
        up = {r: -1 for r in range(g)}
        down: dict[int, list[int]] = {r: [] for r in range(g)}
        for n in range(nodes):
            for i in range(per):
                r = intra[n][i]
                up[r] = -1 if i == 0 else intra[n][i - 1]
                if i < per - 1:
                    down[r].append(intra[n][i + 1])
        for n in range(nodes):
            u, d0, d1, kind = get_dtree(nodes, n)[t]
            if u != -1:
                up[ttp[n]] = (ttc0 if kind == 0 else ttc1)[u]
            if d0 != -1:
                down[ttc0[n]].append(ttp[d0])
            if d1 != -1:
                down[ttc1[n]].append(ttp[d1])
        trees.append({r: (up[r], down[r]) for r in range(g)})
    return trees


def nccl_tree(g: int, n: int, per: int, chunks: int) -> list[set[Move]]:
    """NCCL's tree: half the data on each of connect.cc's two trees, chunks pipelined."""
    if g == 1:
        return []
    d = disps(counts(n, 2 * chunks))
    one, two = nccl_tree_links(g, per)
    a = pipelined_tree(one, [(d[c], d[c + 1]) for c in range(chunks)])
    b = pipelined_tree(two, [(d[c], d[c + 1]) for c in range(chunks, 2 * chunks)])
    last = max(max(a), max(b))
    return [a.get(t, set()) | b.get(t, set()) for t in range(last + 1)]


def nvls(g: int, n: int, chunks: int) -> list[set[Move]]:
    """NCCL's NVLS all-reduce (src/device/all_reduce.h, NCCL_ALGO_NVLS): chunk by chunk, every rank
    scatters its chunk into the switch's multicast buffer (participant g, reduced there by
    multimem.ld_reduce) and gathers the previous chunk's sum, multicast by the switch."""
    if g == 1:
        return []
    d = disps(counts(n, chunks))
    switch = g
    out = []
    for k in range(chunks + 1):
        moves = set()
        if k < chunks:
            moves |= {(r, switch, d[k], d[k + 1], "reduce") for r in range(g)}
        if k > 0:
            moves |= {(switch, r, d[k - 1], d[k], "copy") for r in range(g)}
        out.append(moves)
    return out


# --- rings (Patarasuk & Yuan; NCCL's channels) and the hierarchical composition ------------
def rings(g: int, n: int, orders: list[list[int]]) -> list[set[Move]]:
    """K rings at once; ring c carries the c-th of K equal shares, split into G blocks.

    Reduce-scatter step t (0-based): the GPU at position i sends block (i − t) mod G to the
    next; all-gather step t: block (i + 1 − t) mod G.
    """
    k = len(orders)
    d = disps(counts(n, k * g))
    out = []
    for gather in (False, True):
        for t in range(g - 1):
            moves = set()
            for c, order in enumerate(orders):
                for i in range(g):
                    b = (i + (1 if gather else 0) - t) % g
                    lo, hi = d[c * g + b], d[c * g + b + 1]
                    moves.add((order[i], order[(i + 1) % g], lo, hi, "copy" if gather else "reduce"))
            out.append(moves)
    return out


def hierarchical(g: int, n: int, m: int) -> list[set[Move]]:
    """Ring reduce-scatter inside each node (L shards), ring all-reduce of each shard across nodes, all-gather inside."""
    per = g // m
    d = disps(counts(n, g))                       # G pieces: shard j is pieces j·M … j·M+M−1
    shard = lambda j: (d[j * m], d[(j + 1) * m])  # noqa: E731
    out = []
    for t in range(per - 1):                      # reduce-scatter inside nodes
        out.append({(node * per + i, node * per + (i + 1) % per, *shard((i - t) % per), "reduce")
                    for node in range(m) for i in range(per)})
    for gather in (False, True):                  # across nodes, on the shard local GPU i finished
        for t in range(m - 1):
            moves = set()
            for i in range(per):
                j = (i + 1) % per
                for node in range(m):
                    b = (node + (1 if gather else 0) - t) % m
                    piece = j * m + b
                    moves.add((node * per + i, ((node + 1) % m) * per + i, d[piece], d[piece + 1],
                               "copy" if gather else "reduce"))
            out.append(moves)
    for t in range(per - 1):                      # all-gather inside nodes
        out.append({(node * per + i, node * per + (i + 1) % per, *shard((i + 1 - t) % per), "copy")
                    for node in range(m) for i in range(per)})
    return out


def reference(name: str, g: int, n: int, options: dict) -> list[set[Move]] | None:
    """The reference schedule of a registered algorithm with its options (None: none written)."""
    if name == "ring":
        k = options.get("channels") or 1
        orders = options.get("ring_order")
        if orders is None:
            orders = [list(range(1, g + 1))]
        orders = [[x - 1 for x in o] for o in orders]
        if len(orders) == 1:
            orders = orders * k
        return rings(g, n, orders)
    if name == "bidirectional-ring":
        return rings(g, n, [list(range(g)), list(range(g))[::-1]])
    if name == "tree":
        return tree(g, n, options.get("chunks") or 1)
    if name == "double-tree":
        return double_tree(g, n, options.get("chunks") or 1)
    if name == "nccl-tree":
        per = options.get("gpus_per_node") or max(d for d in range(1, min(g, 8) + 1) if g % d == 0)
        return nccl_tree(g, n, per, options.get("chunks") or 1)
    if name == "nvls":
        return nvls(g, n, options.get("chunks") or 1)
    if name == "recursive-doubling":
        return recursive_doubling(g, n)
    if name == "halving-doubling":
        return halving_doubling(g, n)
    if name == "hierarchical":
        return hierarchical(g, n, options["nodes"])
    if name == "master":
        return None
    if name == "naive":
        return [{(a, b, 0, n, "reduce") for a in range(g) for b in range(g) if a != b}] if g > 1 else []
    return None
