#!/bin/sh
# etcd-backup.sh saves a snapshot of the bundled etcd into BACKUP_DIR and
# keeps the newest KEEP there: the chart's backup CronJob runs it (and the
# tests run it as the Job does). etcdctl finds etcd in ETCDCTL_ENDPOINTS
# (one member: a snapshot is a member's), ETCDCTL_CACERT, ETCDCTL_CERT
# and ETCDCTL_KEY; a snapshot needs root, ROOT_PASSWORD. A snapshot is
# written under a temporary name and renamed when whole: a failed run
# leaves no snapshot that looks good.
set -eu

name="snapshot-$(date -u +%Y%m%dT%H%M%SZ).db"
etcdctl --user="root:$ROOT_PASSWORD" snapshot save "$BACKUP_DIR/$name.part"
mv "$BACKUP_DIR/$name.part" "$BACKUP_DIR/$name"
echo "etcd-backup: $BACKUP_DIR/$name"

# The newest KEEP stay: the glob sorts the names, which sort by time.
set -- "$BACKUP_DIR"/snapshot-*.db
old=$(($# - KEEP))
while [ "$old" -gt 0 ]; do
	rm -f "$1"
	echo "etcd-backup: removed $1"
	shift
	old=$((old - 1))
done
