module example.com/delta

go 1.19
