require 'stackprof'
def hot; x = 0; 3000.times { |i| x += i * i }; x; end
def warm; x = 0; 1000.times { |i| x += i * i }; x; end
StackProf.run(mode: :cpu, out: ARGV[0], raw: true, interval: 1000) do
  t = Time.now + 0.3
  while Time.now < t; hot; warm; end
end
