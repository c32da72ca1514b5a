module pprofdemo

go 1.19
