package source

import clog "github.com/coredns/coredns/plugin/pkg/log"

// pluginName is the plugin the sources log and count for.
const pluginName = "globaladdr"

var log = clog.NewWithPlugin(pluginName)
