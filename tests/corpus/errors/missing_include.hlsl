// Includes a file that does not exist.
#include "does_not_exist.hlsli"

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
}
