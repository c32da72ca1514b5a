import sys, time
SLOW = int(sys.argv[2]) if len(sys.argv) > 2 else 1
def hot():
    x = 0
    for i in range(3000 * SLOW):
        x += i * i
    return x
def warm():
    x = 0
    for i in range(1000):
        x += i * i
    return x
def cold():
    x = 0
    for i in range(1000):
        x ^= i * i
    return x
end = time.time() + float(sys.argv[1])
while time.time() < end:
    hot(); warm(); cold()
