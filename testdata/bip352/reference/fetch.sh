#!/bin/sh
# Puts BIP352's Python reference implementation (bitcoin/bips, bip-0352/, at
# the commit below) in this folder and checks every file against SHA256SUMS.
#
#   sh testdata/bip352/reference/fetch.sh              # from GitHub (curl)
#   sh testdata/bip352/reference/fetch.sh /path/to/bips # from a clone (its .git or a bare repo)
#
# The files are not kept in utxod's repository (.gitignore); see README.md.
set -eu
COMMIT=7fe0b034ec967b52a5a28276419117326df93263
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
for f in $(awk '{print $2}' SHA256SUMS); do
	mkdir -p "$(dirname "$f")"
	if [ $# -ge 1 ]; then
		git --git-dir="$1" show "$COMMIT:bip-0352/$f" >"$f.tmp" 2>/dev/null ||
			git -C "$1" show "$COMMIT:bip-0352/$f" >"$f.tmp"
	else
		curl -fsSL "https://raw.githubusercontent.com/bitcoin/bips/$COMMIT/bip-0352/$f" -o "$f.tmp"
	fi
	mv "$f.tmp" "$f"
done
sha256sum -c --quiet SHA256SUMS
echo "BIP352 reference at bitcoin/bips@$COMMIT in $here"
