module example.com/zone-agent

go 1.21
