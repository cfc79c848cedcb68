#!/usr/bin/env python3
"""Tweaks of silent payment eligible transactions, from BIP352's reference.

    python3 tweaks.py transactions.json

transactions.json is a list of {"tx": hex (serialized transaction, with its
witnesses), "prevouts": [hex scriptPubKey of the output each input spends, in
input order]}. Prints one JSON object: "tweaks", a list of {"txid", "tweak"}
(txid in display order, tweak = ser_P(input_hash·A), compressed) for every
eligible transaction in input order, and "skipped", the count of ineligible
ones by reason.

The keys of the inputs, the input hash and the point arithmetic come from the
reference implementation's own functions (reference.py's
get_pubkey_from_input and get_input_hash, secp256k1lab's GE and Scalar), as
its receiving test uses them. This driver adds only what the reference leaves
to its caller: reading transactions, and the BIP's eligibility rules of
"Scanning silent payment eligible transactions" (a taproot output, no spent
output of SegWit version > 1, at least one input key, A not at infinity).
Nothing here comes from utxod. fetch.sh puts the reference next to it.
"""

import hashlib
import json
import sys
from io import BytesIO
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
sys.path.insert(0, str(here / "secp256k1lab" / "src"))

import reference  # noqa: E402  (BIP352's reference.py)
from bitcoin_utils import COutPoint, CTxInWitness, VinInfo, deser_compact_size, is_p2tr  # noqa: E402
from secp256k1lab.secp256k1 import GE, Scalar  # noqa: E402


def read_varbytes(f):
    n = deser_compact_size(f)
    b = f.read(n)
    if len(b) != n:
        raise ValueError("truncated transaction")
    return b


def parse_tx(raw):
    """(txid display hex, inputs, output scripts) of a serialized transaction;
    an input is (outpoint, scriptSig, witness stack)."""
    f = BytesIO(raw)
    version = f.read(4)
    segwit = False
    if raw[4:6] == b"\x00\x01":
        f.read(2)
        segwit = True
    ins = []
    for _ in range(deser_compact_size(f)):
        op = COutPoint()
        op.deserialize(f)
        script_sig = read_varbytes(f)
        f.read(4)  # sequence
        ins.append([op, script_sig, []])
    outs = []
    n_out = deser_compact_size(f)
    for _ in range(n_out):
        f.read(8)
        outs.append(read_varbytes(f))
    end_outputs = f.tell()
    if segwit:
        for i in ins:
            i[2] = [read_varbytes(f) for _ in range(deser_compact_size(f))]
    locktime = f.read(4)
    if len(locktime) != 4 or f.read(1):
        raise ValueError("bad transaction length")
    # txid: double SHA-256 of the serialization without witnesses.
    start_inputs = 6 if segwit else 4
    stripped = version + raw[start_inputs:end_outputs] + locktime
    txid = hashlib.sha256(hashlib.sha256(stripped).digest()).digest()[::-1].hex()
    return txid, ins, outs


def witness_version(spk):
    """BIP141: a scriptPubKey of 4 to 42 bytes, a version opcode (OP_0,
    OP_1..OP_16) and one direct push of 2 to 40 bytes is a witness program."""
    if not 4 <= len(spk) <= 42 or spk[1] + 2 != len(spk):
        return None
    if spk[0] == 0x00:
        return 0
    if 0x51 <= spk[0] <= 0x60:
        return spk[0] - 0x50
    return None


def tweak_of(entry, skipped):
    txid, ins, outs = parse_tx(bytes.fromhex(entry["tx"]))
    prevouts = [bytes.fromhex(s) for s in entry["prevouts"]]
    if len(prevouts) != len(ins):
        raise ValueError(f"{txid}: {len(ins)} inputs, {len(prevouts)} prevouts")
    reason = None
    if len(ins) == 1 and ins[0][0].hash == bytes(32) and ins[0][0].n == 0xFFFFFFFF:
        reason = "coinbase"
    elif not any(is_p2tr(o) for o in outs):
        reason = "no_taproot_output"
    elif any((witness_version(p) or 0) > 1 for p in prevouts):
        reason = "spends_segwit_v2_or_later"
    if reason is None:
        vins = []
        for (op, script_sig, stack), spk in zip(ins, prevouts):
            w = CTxInWitness()
            w.scriptWitness.stack = list(stack)
            vins.append(VinInfo(outpoint=op, scriptSig=script_sig, txinwitness=w, prevout=spk))
        keys = []
        for vin in vins:
            pubkey = reference.get_pubkey_from_input(vin)
            if not pubkey.infinity:
                keys.append(pubkey)
        if not keys:
            reason = "no_input_key"
        else:
            a_sum = GE.sum(*keys)
            if a_sum.infinity:
                reason = "input_keys_sum_to_infinity"
            else:
                input_hash = reference.get_input_hash([vin.outpoint for vin in vins], a_sum)
                try:
                    scalar = Scalar.from_bytes_checked(input_hash)
                except ValueError:
                    reason = "input_hash_not_a_scalar"
                else:
                    return {"txid": txid, "tweak": (scalar * a_sum).to_bytes_compressed().hex()}
    skipped[reason] = skipped.get(reason, 0) + 1
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        entries = json.load(f)
    skipped = {}
    tweaks = []
    for entry in entries:
        t = tweak_of(entry, skipped)
        if t is not None:
            tweaks.append(t)
    json.dump({"tweaks": tweaks, "skipped": skipped}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
