#!/bin/sh
# etcd-auth.sh makes the bundled etcd's users and turns its authentication
# on: the chart's hook Job runs it after every install and upgrade (and the
# tests run it as the Job does). Run again, it changes nothing but the
# passwords, which it sets to the Secrets'. etcdctl finds etcd in
# ETCDCTL_ENDPOINTS, ETCDCTL_CACERT, ETCDCTL_CERT and ETCDCTL_KEY; the
# passwords are ROOT_PASSWORD, READER_PASSWORD and WRITER_PASSWORD; the
# tree is ETCD_PATH.
#
# dns-reader (the DNS pods) reads the tree and /globaladdr/ (from etcd
# keys), and writes the serial stamps under /globaladdr/serial/;
# dns-writer (the webhook sidecar, a LAN view taking ACME UPDATEs) does the
# same and writes the tree.
set -eu

# The members start beside the Job: wait until one answers, 5 minutes at
# most. (With authentication on, etcd refuses the health check's read,
# which etcdctl counts as healthy.)
tries=0
until etcdctl endpoint health >/dev/null 2>&1; do
	tries=$((tries + 1))
	if [ "$tries" -ge 60 ]; then
		echo "etcd-auth: etcd did not answer in 5 minutes:" >&2
		etcdctl endpoint health >&2 || true
		exit 1
	fi
	sleep 5
done

root="--user=root:$ROOT_PASSWORD"
if ! etcdctl "$root" user get root >/dev/null 2>&1; then
	echo "etcd-auth: turning authentication on"
	etcdctl user add root --new-user-password="$ROOT_PASSWORD"
	etcdctl user grant-role root root
	etcdctl auth enable
fi
E="etcdctl $root"

role() { # role NAME PERMISSION KEY: NAME may PERMISSION every key under KEY
	$E role get "$1" >/dev/null 2>&1 || $E role add "$1" >/dev/null
	$E role grant-permission "$1" --prefix=true "$2" "$3" >/dev/null
}
role dns-read read "${ETCD_PATH%/}/"
role dns-read read /globaladdr/
role dns-stamp readwrite /globaladdr/serial/
role dns-write readwrite "${ETCD_PATH%/}/"

user() { # user NAME PASSWORD ROLE...: NAME, with PASSWORD and the ROLEs
	name=$1 password=$2
	shift 2
	if $E user get "$name" >/dev/null 2>&1; then
		printf '%s\n' "$password" | $E user passwd "$name" --interactive=false >/dev/null
	else
		$E user add "$name" --new-user-password="$password" >/dev/null
	fi
	for r; do
		$E user grant-role "$name" "$r" >/dev/null
	done
}
user dns-reader "$READER_PASSWORD" dns-read dns-stamp
user dns-writer "$WRITER_PASSWORD" dns-read dns-stamp dns-write
echo "etcd-auth: users dns-reader and dns-writer ready"
