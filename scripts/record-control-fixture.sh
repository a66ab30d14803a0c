#!/usr/bin/env bash
# Records a real tmux control-mode stream for test/unit/control-codec.test.ts:
#   test/fixtures/control-stream.bin           what `tmux -u -C attach-session` wrote to stdout
#   test/fixtures/control-stream.expected.bin  the exact bytes the pane program wrote
# The pane puts its pty in raw mode (`stty raw -echo`) so the terminal sees those bytes unchanged
# (no LF -> CRLF). A `display-message -p` reply sits between the two halves of the output.
# tmux runs on a private socket in a temp dir (-S), is killed through that socket only, and the
# dir is removed after. Usage: scripts/record-control-fixture.sh (from anywhere).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/test/fixtures"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tether-record-XXXXXX")
sock="$tmp/sock"
reader=

t() { env -u TMUX tmux -S "$sock" -f /dev/null "$@"; }
# wait-for blocks until the pane signals; never longer than 10 s.
tw() { timeout 10 env -u TMUX tmux -S "$sock" wait-for "$@"; }
cleanup() {
  exec 3>&- 2>/dev/null || true
  t kill-server 2>/dev/null || true
  if [ -n "$reader" ]; then wait "$reader" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Part 1: colours, UTF-8 (2-, 3- and 4-byte), tabs, backslashes, CR LF, bare LF, bare CR.
{
  printf '\033[1;31mred\033[0m \033[38;5;208morange\033[m\ttab\tstop\r\n'
  printf 'caf\303\251 \346\227\245\346\234\254\350\252\236 \360\237\216\211 back\\slash \\\\ \\015\n'
  printf 'progress 10%%\rprogress 99%%\r\n\033[2J\033[H\033[?25l'
} >"$tmp/part1.bin"

# Part 2: every byte value, coloured multibyte text, then a long run of bare multibyte text:
# tmux cuts %output lines at arbitrary byte offsets, so some UTF-8 sequences straddle two lines.
{
  i=0
  while [ "$i" -lt 256 ]; do
    # shellcheck disable=SC2059 # the format is the octal escape itself
    printf "\\$(printf %03o "$i")"
    i=$((i + 1))
  done
  j=0
  while [ "$j" -lt 600 ]; do
    printf '\303\251\346\227\245\360\237\216\211\033[3%dm|' $((j % 8))
    j=$((j + 1))
  done
  j=0
  while [ "$j" -lt 1500 ]; do
    printf '\303\251\346\227\245\360\237\216\211'
    j=$((j + 1))
  done
  printf '\033[0m\r\ndone \\ ok\r\n'
} >"$tmp/part2.bin"

cat >"$tmp/pane.sh" <<'PANE'
sock=$1; dir=$2
stty raw -echo
tmux -S "$sock" wait-for go1
cat "$dir/part1.bin"
tmux -S "$sock" wait-for -S done1
tmux -S "$sock" wait-for go2
cat "$dir/part2.bin"
tmux -S "$sock" wait-for -S done2
exec sleep 600
PANE

t new-session -d -s rec -x 80 -y 24 sh "$tmp/pane.sh" "$sock" "$tmp"

mkfifo "$tmp/in"
t -u -C attach-session -t =rec <"$tmp/in" >"$tmp/stream.bin" &
reader=$!
exec 3>"$tmp/in"
# The first block is the reply to the attach itself.
tries=0
until grep -aq '^%end' "$tmp/stream.bin"; do
  tries=$((tries + 1))
  if [ "$tries" -gt 200 ]; then echo "control client did not attach" >&2; exit 1; fi
  sleep 0.05
done

tw -S go1
tw done1
sleep 0.5 # let tmux pass the pane's bytes on before the command goes in
printf 'display-message -p "between #{session_name} \\\\ ok"\n' >&3
sleep 0.5
tw -S go2
tw done2
sleep 1
exec 3>&- # EOF on its stdin ends the control client
wait "$reader"
reader=

mkdir -p "$out"
cp "$tmp/stream.bin" "$out/control-stream.bin"
cat "$tmp/part1.bin" "$tmp/part2.bin" >"$out/control-stream.expected.bin"
echo "recorded $(wc -c <"$out/control-stream.bin") stream bytes, $(wc -c <"$out/control-stream.expected.bin") pane bytes"
