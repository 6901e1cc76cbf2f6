#define BOOST_TEST_MODULE onejob
#include <boost/test/unit_test.hpp>
