// An array of small structs in a constant buffer: std140 strides it by 16 (a struct is rounded
// up to 16 bytes), Metal by the struct's own 4; no Metal declaration of the struct gives both
// its own size and the array's stride. The portable spelling pads the struct to 16 bytes
// (float a; float3 pad;) or uses float4 elements.
struct Light
{
    float Intensity;
};

cbuffer Lights
{
    Light All[4];
};

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = All[id.x % 4].Intensity;
}
