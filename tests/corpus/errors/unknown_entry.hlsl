// Compiled with the entry point "Missing" given by the caller; the file defines only "Present".
RWStructuredBuffer<float> Data;

[numthreads(1, 1, 1)]
void Present(uint3 id : SV_DispatchThreadID)
{
    Data[id.x] = 1.0;
}
