package etcdzone
