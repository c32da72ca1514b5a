module example.com/pay

go 1.19
