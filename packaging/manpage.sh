#!/usr/bin/env bash
# manpage.sh: writes the cardsync(1) man page (troff) to stdout from the program's own help:
# `cardsync -h` gives NAME, DESCRIPTION and the COMMANDS list, each command's `-h` its section
# under COMMAND DETAILS (verbatim).
#
# Usage: packaging/manpage.sh BINARY VERSION EPOCH   (EPOCH: the page's date, Unix seconds)
# Exit status: 0 written, 1 the help text was not in the expected form, 2 usage error.
set -euo pipefail

if [[ $# -ne 3 ]]; then
	echo "usage: $0 BINARY VERSION EPOCH" >&2
	exit 2
fi
bin=$1 version=$2 epoch=$3
export LC_ALL=C

# esc: text to troff: backslashes, minus signs, and a leading . or ' that troff would take as a
# request.
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

top=$("$bin" -h 2>&1) || true
summary=${top%%$'\n'*}
if [[ $summary != "cardsync "* ]]; then
	echo "manpage.sh: unexpected first line of cardsync -h: $summary" >&2
	exit 1
fi
# "  name  description" lines between "Commands:" and the next blank line.
# (awk reads a here-string: no writer left to die of SIGPIPE when it exits
# early, which pipefail would turn into a failed build.)
commands=$(awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on { print }' <<<"$top")
if [[ -z $commands ]]; then
	echo "manpage.sh: no Commands: list in cardsync -h" >&2
	exit 1
fi

printf '.TH CARDSYNC 1 "%s" "cardsync %s" "User Commands"\n' "$(date -u -d "@$epoch" +%Y-%m-%d)" "$(printf '%s' "$version" | esc)"
printf '.SH NAME\ncardsync \\- %s\n' "$(printf '%s\n' "${summary#cardsync }" | sed 's/\.$//' | esc)"
printf '.SH SYNOPSIS\n.B cardsync\n.I command\n.RI [ flags ]\n'
printf '.SH DESCRIPTION\n%s\n' "$(printf '%s\n' "$summary" | esc)"
printf '.PP\nEvery command takes \\fB\\-h\\fR for its flags and examples; they are shown below.\n'
printf '.SH COMMANDS\n'
names=()
while IFS= read -r line; do
	name=$(awk '{ print $1 }' <<<"$line")
	desc=$(sed -E 's/^ *[^ ]+ +//' <<<"$line")
	names+=("$name")
	printf '.TP\n.B %s\n%s\n' "$(esc <<<"$name")" "$(esc <<<"$desc")"
done <<<"$commands"
printf '.SH "COMMAND DETAILS"\n'
for name in "${names[@]}"; do
	text=$("$bin" "$name" -h 2>&1) || true
	printf '.SS "cardsync %s"\n.nf\n%s\n.fi\n' "$(esc <<<"$name")" "$(printf '%s\n' "$text" | esc)"
done
cat <<'TAIL'
.SH FILES
.TP
.I /etc/cardsync/config.toml
The configuration of cardsync.service (cardsync@NAME.service reads /etc/cardsync/NAME.toml).
.TP
.I /etc/cardsync/api\-password
The API password (root, mode 0600), handed to the service by systemd.
.TP
.I /var/lib/cardsync
The state directory: the warehouse and its backups.
.SH "SEE ALSO"
.BR systemctl (1),
.BR systemd.exec (5),
/usr/share/doc/cardsync/README.md.gz,
/usr/share/doc/cardsync/README.Debian
TAIL
