module github.com/exoscale/egoscale/v3

go 1.26.0
