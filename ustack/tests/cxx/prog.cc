// A C++ program for tests/cxx-tests, built with g++ -O2 -g
// -fno-omit-frame-pointer: a template member function, calls inlined
// into it two deep, a name with spaces, and one with ';'.
#include <map>
#include <unistd.h>

extern "C" {
volatile int sink;

/* The innermost frame: the call of getppid */
__attribute__((noinline)) int leaf(int x)
{
	return (int)getppid() + x + sink;
}

/* A symbol with ';', which --folded must not take as two frames */
int odd(int x) __asm__("\"odd;name\"");
__attribute__((noinline)) int odd(int x)
{
	return leaf(x * 3) + 1;
}
}

/* Inlined into ns::Box<T>::get, one in the other */
static inline __attribute__((always_inline)) int inner_step(int x)
{
	int r = odd(x + sink);
	return r * 2 + sink;
}

static inline __attribute__((always_inline)) int outer_step(int x)
{
	int r = inner_step(x - 1);
	return r + x * sink;
}

namespace ns {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get(T x)
	{
		T r = outer_step((int)(v + x));
		return r + sink;
	}
};
}

__attribute__((noinline)) long count(const std::map<int, int> &m)
{
	ns::Box<long> b = { (long)m.size() };
	long r = b.get(sink);
	return r + sink;
}

int main()
{
	std::map<int, int> m;

	m[1] = 2;
	long r = count(m);
	return (int)(r & 1);
}
