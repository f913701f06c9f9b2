# The helm test of the release (templates/tests/dns-test.yaml), for busybox's
# sh and nslookup: asks each view of VIEWS (VIEW=SERVER:PORT, separated by
# spaces) for DOMAIN's SOA and, if NAME is set, NAME's addresses (with
# TUNNEL set, the tunnel for every name, the external view's CNAME of NAME
# to TUNNEL). It fails when a view does not answer, or the external view
# answers an internal address (globaladdr's default internal prefixes).
set -u
internal='^(10\.|127\.|169\.254\.|172\.(1[6-9]|2[0-9]|3[01])\.|192\.168\.|100\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\.|[fF][cCdD]|[fF][eE][89aAbB]|::1$)'
status=0
for pair in $VIEWS; do
	view=${pair%%=*} server=${pair#*=}
	if ! nslookup -type=soa "$DOMAIN" "$server" >/dev/null; then
		echo "FAIL: the $view view ($server) does not answer $DOMAIN's SOA"
		status=1
		continue
	fi
	if [ -z "$NAME" ]; then
		echo "ok: the $view view ($server) answers $DOMAIN's SOA"
		continue
	fi
	addresses=$(for type in a aaaa; do nslookup -type=$type "$NAME" "$server" | sed -n '/^Name:/,$s/^Address: *//p'; done)
	if [ "$view" = external ] && [ -n "$TUNNEL" ] && ! echo "$addresses" | grep -qE "$internal"; then
		if nslookup -type=cname "$NAME" "$server" | grep -qi "canonical name = $TUNNEL\.\?$"; then
			echo "ok: the external view ($server) answers $NAME as a CNAME to $TUNNEL"
		else
			echo "FAIL: the external view ($server) does not answer $NAME as a CNAME to $TUNNEL"
			status=1
		fi
	elif [ -z "$addresses" ]; then
		echo "FAIL: the $view view ($server) answers no address of $NAME"
		status=1
	elif [ "$view" = external ] && leaked=$(echo "$addresses" | grep -E "$internal"); then
		echo "FAIL: the external view ($server) answers $NAME with internal addresses:" $leaked
		status=1
	else
		echo "ok: the $view view ($server) answers $NAME:" $addresses
	fi
done
exit $status
